/**
 * The Chat view's page (runs in the webview; bundled to dist/chat.js). It draws what the extension
 * sends — the entries as HTML the extension rendered from the server's display blocks, the
 * agent's state line — keeps the folds the user opened across redraws, follows the bottom while
 * the answer streams, and reports the input, Send, Stop and the state line's setting button.
 * It decides nothing about the conversation.
 */

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

type ToPage =
  | { type: 'render'; entries: { key: string; html: string }[]; hasSession: boolean; empty: string }
  | { type: 'entry'; key: string; html: string }
  | {
      type: 'status';
      line: string;
      detail: string;
      tone: 'ok' | 'busy' | 'warn' | 'error';
      running: boolean;
      sendLabel: string;
      placeholder: string;
      setting: string | null;
    }
  | { type: 'prefill'; text: string }
  | { type: 'setInput'; text: string }
  | { type: 'sent' };

const vscode = acquireVsCodeApi();
const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const log = byId<HTMLDivElement>('log');
const input = byId<HTMLTextAreaElement>('input');
const form = byId<HTMLFormElement>('form');
const sendButton = byId<HTMLButtonElement>('send');
const stopButton = byId<HTMLButtonElement>('stop');
const statusLine = byId<HTMLDivElement>('status-line');
const statusDetail = byId<HTMLDivElement>('status-detail');
const settingButton = byId<HTMLButtonElement>('setting');
/** The folds the user opened (`data-fold` keys). */
const opened = new Set<string>();
let lastEsc = 0;

function nearBottom(): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
}

function restoreFolds(root: ParentNode): void {
  root.querySelectorAll<HTMLDetailsElement>('details[data-fold]').forEach((d) => {
    if (opened.has(d.dataset.fold ?? '')) d.open = true;
  });
}

function fragment(html: string): DocumentFragment {
  const t = document.createElement('template');
  t.innerHTML = html;
  return t.content;
}

function render(m: Extract<ToPage, { type: 'render' }>): void {
  const follow = nearBottom();
  log.textContent = '';
  if (!m.hasSession || !m.entries.length) {
    const d = document.createElement('div');
    d.className = 'empty';
    d.textContent = m.empty;
    log.appendChild(d);
  }
  for (const e of m.entries) log.appendChild(fragment(e.html));
  restoreFolds(log);
  if (follow) requestAnimationFrame(() => (log.scrollTop = log.scrollHeight));
}

function replaceEntry(key: string, html: string): void {
  const follow = nearBottom();
  const next = fragment(html);
  restoreFolds(next);
  const old = Array.from(log.querySelectorAll<HTMLElement>('[data-key]')).find((el) => el.dataset.key === key);
  if (old) old.replaceWith(next);
  else {
    log.querySelector('.empty')?.remove();
    log.appendChild(next);
  }
  if (follow) log.scrollTop = log.scrollHeight;
}

function showStatus(m: Extract<ToPage, { type: 'status' }>): void {
  statusLine.textContent = m.line;
  statusLine.className = `tone-${m.tone}`;
  statusDetail.textContent = m.detail;
  statusDetail.hidden = !m.detail;
  stopButton.hidden = !m.running;
  sendButton.textContent = m.sendLabel;
  input.placeholder = m.placeholder;
  settingButton.hidden = !m.setting;
  settingButton.dataset.setting = m.setting ?? '';
}

function send(): void {
  const text = input.value;
  if (!text.trim()) return;
  vscode.postMessage({ type: 'send', text });
}

// `toggle` does not bubble: listen while it goes down.
log.addEventListener(
  'toggle',
  (ev) => {
    const d = ev.target as HTMLDetailsElement;
    const key = d.dataset?.fold;
    if (!key) return;
    if (d.open) opened.add(key);
    else opened.delete(key);
  },
  true,
);
form.addEventListener('submit', (e) => {
  e.preventDefault();
  send();
});
stopButton.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
settingButton.addEventListener('click', () => vscode.postMessage({ type: 'openSetting', setting: settingButton.dataset.setting }));
input.addEventListener('input', () => vscode.postMessage({ type: 'input', text: input.value }));
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey) {
    e.preventDefault();
    send();
    return;
  }
  if (e.key === 'Escape') {
    if (input.value === '') {
      const now = Date.now();
      if (now - lastEsc < 600) {
        lastEsc = 0;
        vscode.postMessage({ type: 'openTree' });
      } else lastEsc = now;
    } else lastEsc = 0;
  }
});
window.addEventListener('message', (ev: MessageEvent<ToPage>) => {
  const m = ev.data;
  switch (m.type) {
    case 'render':
      return render(m);
    case 'entry':
      return replaceEntry(m.key, m.html);
    case 'status':
      return showStatus(m);
    case 'prefill':
      input.value = m.text;
      input.focus();
      input.setSelectionRange(m.text.length, m.text.length);
      vscode.postMessage({ type: 'input', text: input.value });
      return;
    case 'setInput':
      // Another session's own input (kept per session); the focus stays where it is.
      input.value = m.text;
      return;
    case 'sent':
      input.value = '';
      vscode.postMessage({ type: 'input', text: '' });
      return;
  }
});
window.addEventListener('focus', () => vscode.postMessage({ type: 'focus', focused: true }));
window.addEventListener('blur', () => vscode.postMessage({ type: 'focus', focused: false }));
vscode.postMessage({ type: 'ready' });
