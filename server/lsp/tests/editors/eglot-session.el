;;; eglot-session.el --- sessiontree lsp in Emacs through eglot, headless  -*- lexical-binding: t; -*-
;; usage: SESSIONTREE_BIN=/abs/sessiontree SESSIONTREE_FILE=/abs/session.jsonl \
;;        emacs --batch -Q -l eglot-session.el
;; Opens a session file, checks the outline (documentSymbol and imenu), the diagnostics (flymake),
;; a custom request, a server notification, and a clean shutdown. Prints PASS or FAIL lines.
(require 'package)
(when (file-directory-p "/usr/share/emacs/site-lisp/elpa")   ; Debian's elpa-* packages
  (add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa"))
(package-initialize)
(require 'eglot)
(require 'cl-lib)
(require 'flymake)

(defvar st-bin (getenv "SESSIONTREE_BIN"))
(defvar st-file (getenv "SESSIONTREE_FILE"))
(defvar st-change nil)

(defun st-check (cond msg)
  (unless cond (princ (format "FAIL %s\n" msg)) (kill-emacs 1))
  (princ (format "ok   %s\n" msg)))

(defun st-wait (secs pred what)
  (with-timeout (secs (st-check nil (format "%s: timed out" what)))
    (while (not (funcall pred)) (accept-process-output nil 0.05))))

(define-derived-mode sessiontree-jsonl-mode fundamental-mode "Session")
(add-to-list 'auto-mode-alist '("\\.jsonl\\'" . sessiontree-jsonl-mode))
(setq eglot-server-programs `((sessiontree-jsonl-mode . (,st-bin "lsp"))))
(cl-defmethod eglot-handle-notification (_server (_method (eql sessionTree/didChange)) &rest params)
  (setq st-change params))

(condition-case err
    (let ((buf (find-file-noselect st-file)))
      (with-current-buffer buf
        (sessiontree-jsonl-mode)
        (apply #'eglot (eglot--guess-contact))
        (let* ((server (eglot-current-server))
               (uri (eglot--path-to-uri st-file)))
          (st-check server "eglot connected")
          (let ((info (eglot--server-info server)))
            (st-check (equal (plist-get info :name) "sessiontree") (format "serverInfo %S" info)))
          ;; The outline: the root run (two entries, the second a branch point with two branches) and
          ;; the orphan as an extra root.
          (let* ((syms (jsonrpc-request server :textDocument/documentSymbol
                                        `(:textDocument (:uri ,uri))))
                 (top (append syms nil))
                 (branches (append (plist-get (nth 1 top) :children) nil)))
            (st-check (= (length top) 3) (format "documentSymbol: %d top-level symbols" (length top)))
            (st-check (= (length branches) 2) (format "branch point nests %d branches" (length branches)))
            (princ (format "     outline: %S / %S\n" (plist-get (nth 0 top) :name)
                           (mapcar (lambda (b) (plist-get b :name)) branches))))
          (let ((index (funcall imenu-create-index-function)))
            (st-check (consp index) (format "imenu index from eglot: %d items" (length index))))
          ;; Diagnostics arrive through flymake.
          (with-timeout (10 (with-current-buffer (jsonrpc-events-buffer server)
                              (princ (buffer-substring (point-min) (min (point-max) 6000))))
                            (princ (format "flymake-mode %S backends %S unreported %S\n" flymake-mode
                                           flymake-diagnostic-functions eglot--unreported-diagnostics))
                            (st-check nil "flymake diagnostics: timed out"))
            (while (not (flymake-diagnostics)) (flymake-start) (accept-process-output nil 0.1)))
          (let ((texts (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
            (st-check (cl-some (lambda (text) (string-match-p "does not exist" text)) texts)
                      (format "diagnostics: %S" texts)))
          ;; A custom request and the notification it causes.
          (let ((rows (jsonrpc-request server :sessionTree/rows `(:uri ,uri :width 80 :height 20))))
            (st-check (> (length (plist-get rows :lines)) 0) (format "sessionTree/rows: %S" (plist-get rows :lines))))
          (let ((r (jsonrpc-request server :sessionTree/append `(:uri ,uri :text "from emacs"))))
            (st-check (plist-get r :entryId) (format "sessionTree/append %S" r)))
          (with-timeout (10 (with-current-buffer (jsonrpc-events-buffer server)
                              (when (getenv "SESSIONTREE_EVENTS")
                                (write-region (point-min) (point-max) (getenv "SESSIONTREE_EVENTS"))))
                            (st-check nil "sessionTree/didChange: timed out"))
            (while (not st-change) (accept-process-output nil 0.05)))
          (st-check (equal (plist-get st-change :reason) "append") (format "didChange %S" st-change))
          (eglot-shutdown server)
          (st-check (not (jsonrpc-running-p server)) "server shut down (shutdown with null params)"))))
  (error (princ (format "FAIL %S\n" err)) (kill-emacs 1)))
(princ "PASS\n")
(kill-emacs 0)
