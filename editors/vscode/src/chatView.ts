/**
 * The Chat view: a webview showing the conversation along the active path (from
 * `sessionTree/context`, rebuilt after every move or append) and an input box. Send appends a user
 * message at the leaf; the extension prefills the input when a user or custom message is chosen;
 * Escape twice on an empty input opens the tree. The page only draws what it is given.
 */
import * as vscode from 'vscode';
import { errorMessage } from './errors';
import { chatMessages, type ChatMessage } from './logic';
import type { SessionController } from './session';

type FromPage =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'openTree' }
  | { type: 'input'; text: string }
  | { type: 'focus'; focused: boolean };

export class ChatProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private messages: ChatMessage[] = [];
  private pendingPrefill: string | undefined;
  /** The input box's text as the page last reported it (tests read it). */
  inputText = '';
  /** How often Escape Escape asked for the tree (tests read it). */
  openTreeCount = 0;
  private readonly subs: vscode.Disposable[] = [];
  private seq = 0;
  onStateChange: (() => void) | undefined;

  constructor(private readonly ctl: SessionController, private readonly log: vscode.OutputChannel) {
    this.subs.push(
      ctl.onDidChangeRows((c) => {
        if (c.reason !== 'filter' && c.reason !== 'search') void this.rebuild();
      }),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true };
    view.webview.html = html(view.webview.cspSource);
    view.webview.onDidReceiveMessage((m: FromPage) => this.onMessage(m));
    // A hidden or closed page sends no blur: clear the focus key so the keys free up elsewhere.
    const unfocus = () => void vscode.commands.executeCommand('setContext', 'sessiontree.chatFocused', false);
    view.onDidChangeVisibility(() => {
      if (!view.visible) unfocus();
    });
    view.onDidDispose(() => {
      this.view = undefined;
      unfocus();
    });
  }

  get transcript(): readonly ChatMessage[] {
    return this.messages;
  }

  /** Rebuilds the conversation from the server's context at the leaf. */
  async rebuild(): Promise<void> {
    const uri = this.ctl.uri;
    const mine = ++this.seq;
    if (!uri) {
      this.messages = [];
    } else {
      try {
        // The view shows the messages only: the model-facing text stays on the server.
        const ctx = await this.ctl.api.context({ uri, withText: false });
        if (mine !== this.seq) return;
        this.messages = chatMessages(ctx.messages);
      } catch (e) {
        this.log.appendLine(`context: ${errorMessage(e)}`);
        return;
      }
    }
    this.post();
    this.onStateChange?.();
  }

  /** Puts text into the input box (a chosen user message, a /branch). */
  prefill(text: string): void {
    this.pendingPrefill = text;
    this.inputText = text;
    if (this.view) void this.view.webview.postMessage({ type: 'prefill', text });
    this.onStateChange?.();
  }

  focus(): void {
    void vscode.commands.executeCommand('sessiontree.chat.focus');
  }

  private post(): void {
    if (this.view) this.view.title = this.ctl.info?.name ? `Chat — ${this.ctl.info.name}` : 'Chat';
    void this.view?.webview.postMessage({
      type: 'render',
      messages: this.messages,
      session: this.ctl.info?.name ?? this.ctl.uri?.split('/').pop() ?? '',
      hasSession: !!this.ctl.uri,
    });
  }

  private async onMessage(m: FromPage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.post();
        if (this.pendingPrefill !== undefined) void this.view?.webview.postMessage({ type: 'prefill', text: this.pendingPrefill });
        return;
      case 'input':
        this.inputText = m.text;
        this.pendingPrefill = undefined;
        this.onStateChange?.();
        return;
      case 'focus':
        // `focusedView` does not follow focus into a webview: keys bound "when the chat has focus" use this.
        await vscode.commands.executeCommand('setContext', 'sessiontree.chatFocused', m.focused);
        return;
      case 'openTree':
        this.openTreeCount++;
        this.onStateChange?.();
        await vscode.commands.executeCommand('sessiontree.tree.focus');
        return;
      case 'send':
        await this.send(m.text);
        return;
    }
  }

  async send(text: string): Promise<void> {
    const uri = this.ctl.uri;
    if (!uri || !text.trim()) return;
    try {
      await this.ctl.api.append({ uri, kind: 'user', text });
      this.pendingPrefill = undefined;
      this.inputText = '';
      void this.view?.webview.postMessage({ type: 'sent' });
      this.onStateChange?.();
    } catch (e) {
      void vscode.window.showErrorMessage(`Send failed: ${errorMessage(e)}`);
    }
  }

  dispose(): void {
    this.subs.forEach((d) => d.dispose());
  }
}

function nonce(): string {
  let s = '';
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < 32; i++) s += chars.charAt(Math.floor(Math.random() * chars.length));
  return s;
}

function html(csp: string): string {
  const n = nonce();
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${csp} 'unsafe-inline'; script-src 'nonce-${n}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style>
  body { padding: 0; margin: 0; display: flex; flex-direction: column; height: 100vh; font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); }
  #log { flex: 1; overflow-y: auto; padding: 6px 8px; }
  .msg { margin: 0 0 8px 0; white-space: pre-wrap; word-break: break-word; }
  .role { font-weight: 600; opacity: .8; font-size: .9em; text-transform: lowercase; }
  .msg.user .role { color: var(--vscode-charts-blue); }
  .msg.assistant .role { color: var(--vscode-charts-green); }
  .empty { opacity: .7; font-style: italic; }
  form { display: flex; gap: 4px; padding: 6px; border-top: 1px solid var(--vscode-panel-border); }
  textarea { flex: 1; resize: vertical; min-height: 2.4em; font-family: inherit; font-size: inherit; color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); padding: 4px; }
  button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 4px 10px; cursor: pointer; }
  button:hover { background: var(--vscode-button-hoverBackground); }
</style></head>
<body>
<div id="log" aria-live="polite"><div class="empty">No session open.</div></div>
<form id="form"><textarea id="input" rows="2" placeholder="Message (Enter to send, Shift+Enter for a new line, Esc Esc opens the tree)" aria-label="Message"></textarea><button id="send" type="submit">Send</button></form>
<script nonce="${n}">
  const vscode = acquireVsCodeApi();
  const log = document.getElementById('log');
  const input = document.getElementById('input');
  const form = document.getElementById('form');
  let lastEsc = 0;
  function render(m) {
    log.textContent = '';
    if (!m.hasSession) { const d = document.createElement('div'); d.className = 'empty'; d.textContent = 'No session open.'; log.appendChild(d); return; }
    if (!m.messages.length) { const d = document.createElement('div'); d.className = 'empty'; d.textContent = 'Empty conversation at this point.'; log.appendChild(d); }
    for (const msg of m.messages) {
      const d = document.createElement('div'); d.className = 'msg ' + msg.role.replace(/[^a-z]/gi, '-');
      const r = document.createElement('div'); r.className = 'role'; r.textContent = msg.role;
      const t = document.createElement('div'); t.className = 'text'; t.textContent = msg.text;
      d.appendChild(r); d.appendChild(t); log.appendChild(d);
    }
    requestAnimationFrame(() => { log.scrollTop = log.scrollHeight; });
  }
  function send() { const text = input.value; if (!text.trim()) return; vscode.postMessage({ type: 'send', text }); }
  form.addEventListener('submit', (e) => { e.preventDefault(); send(); });
  input.addEventListener('input', () => vscode.postMessage({ type: 'input', text: input.value }));
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey) { e.preventDefault(); send(); return; }
    if (e.key === 'Escape') {
      if (input.value === '') {
        const now = Date.now();
        if (now - lastEsc < 600) { lastEsc = 0; vscode.postMessage({ type: 'openTree' }); } else { lastEsc = now; }
      } else { lastEsc = 0; }
    }
  });
  window.addEventListener('message', (ev) => {
    const m = ev.data;
    if (m.type === 'render') render(m);
    else if (m.type === 'prefill') { input.value = m.text; input.focus(); input.setSelectionRange(m.text.length, m.text.length); vscode.postMessage({ type: 'input', text: input.value }); }
    else if (m.type === 'sent') { input.value = ''; vscode.postMessage({ type: 'input', text: '' }); }
  });
  window.addEventListener('focus', () => vscode.postMessage({ type: 'focus', focused: true }));
  window.addEventListener('blur', () => vscode.postMessage({ type: 'focus', focused: false }));
  vscode.postMessage({ type: 'ready' });
</script>
</body></html>`;
}
