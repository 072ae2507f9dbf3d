/**
 * The Chat view: the session's conversation as the server renders it (`sessionTree/transcript`),
 * the live agent's answer streaming in (`sessionTree/agentEvent`), the agent's state, and an
 * input. Send prompts the session's real agent (`sessionTree/prompt`), or appends without an
 * answer when the agent cannot run (the state line says so first); Stop aborts the answer. The
 * extension prefills the input when a user or custom message is chosen; Escape twice on an empty
 * input opens the tree. The page (src/webview/chatPage.ts) only draws what it is given.
 */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { showAgentDialog } from './agentDialogs';
import { agentAvailable, agentErrorText, statusAdvice, statusDetail, statusLine, statusSetting } from './agentText';
import { ChatDraft } from './chatDraft';
import { ChatReads } from './chatReads';
import { Conversation, type Change, type ChatEntry } from './chatModel';
import { renderEntry } from './chatRender';
import { errorKind, errorMessage } from './errors';
import type { AgentEventParams, AgentStatus } from './protocol';
import type { SessionController } from './session';

type FromPage =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'openTree' }
  | { type: 'openSetting'; setting?: string }
  | { type: 'input'; text: string }
  | { type: 'focus'; focused: boolean };

/** How long streamed changes gather before the page redraws them. */
const FLUSH_MS = 30;

export class ChatProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  readonly conversation = new Conversation();
  readonly draft = new ChatDraft();
  /** How often Escape Escape asked for the tree (tests read it). */
  openTreeCount = 0;
  /** What the chat did last, for the tests (the stream as seen, errors, appends). */
  readonly testLog: Record<string, unknown> = {};
  private readonly subs: vscode.Disposable[] = [];
  private seq = 0;
  private dirtyKeys = new Set<string>();
  private dirtyAll = false;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** The text streamed per message number since the last prompt (tests compare it with the end). */
  private streamed = new Map<number, string>();
  /** A prompt is on its way (the agent may be starting). */
  private sending = false;
  /** The read owed to the answer's end, served by the read after the rows of its change. */
  private readonly reads = new ChatReads(() => void this.rebuild());
  onStateChange: (() => void) | undefined;

  constructor(
    private readonly ctl: SessionController,
    private readonly log: vscode.OutputChannel,
    private readonly extensionUri: vscode.Uri,
  ) {
    this.subs.push(
      ctl.onDidChangeRows((c) => {
        if (c.reason !== 'filter' && c.reason !== 'search' && c.reason !== 'fold' && c.reason !== 'segment') void this.rebuild();
      }),
      ctl.onDidChangeSession((info) => this.sessionChanged(info?.uri)),
      ctl.api.onDidChange((p) => {
        if (p.uri === this.ctl.uri) this.reads.changed();
      }),
      ctl.api.onAgentEvent((p) => this.onAgentEvent(p)),
      ctl.api.onAgentDialog((p, token) => showAgentDialog(p, token, (v) => this.note('dialog', v))),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = html(
      view.webview.cspSource,
      view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'chat.js')).toString(),
      view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
    );
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

  /** What is drawn, oldest first. */
  get transcript(): readonly ChatEntry[] {
    return this.conversation.entries();
  }

  /** The input box's text as the page last reported it (tests read it). */
  get inputText(): string {
    return this.draft.text;
  }

  /** The agent's state, as the chat shows it. */
  get agentStatus(): AgentStatus | undefined {
    return this.conversation.status;
  }

  private sessionChanged(uri: string | undefined): void {
    this.conversation.reset(uri);
    this.streamed.clear();
    const text = this.draft.sessionChanged(uri);
    void this.view?.webview.postMessage({ type: 'setInput', text });
    this.postStatus();
    if (uri) void this.loadStatus(uri);
  }

  /** Asks for the agent's state (which also finds an agent running in the user's terminal). */
  private async loadStatus(uri: string): Promise<void> {
    try {
      const status = await this.ctl.api.agent({ uri });
      if (this.conversation.uri !== uri) return;
      this.conversation.status = status;
      this.postStatus();
      this.onStateChange?.();
    } catch (e) {
      this.log.appendLine(`agent: ${errorMessage(e)}`);
    }
  }

  /** Reads the conversation again at the leaf. */
  async rebuild(): Promise<void> {
    const uri = this.ctl.uri;
    const mine = ++this.seq;
    if (uri !== this.conversation.uri) this.sessionChanged(uri);
    if (uri) {
      const ended = this.conversation.endedKeys();
      const answered = this.reads.started();
      try {
        const t = await this.ctl.api.transcript({ uri });
        const endedSince = answered();
        if (mine !== this.seq || uri !== this.conversation.uri) return;
        this.conversation.setTranscript(t, endedSince ? this.conversation.endedKeys() : ended);
      } catch (e) {
        answered();
        this.log.appendLine(`transcript: ${errorMessage(e)}`);
        return;
      }
    }
    this.postAll();
    this.onStateChange?.();
  }

  /** Puts text into the input box (a chosen user message, a /branch). */
  prefill(text: string): void {
    this.draft.pendingPrefill = text;
    this.draft.text = text;
    if (this.view) void this.view.webview.postMessage({ type: 'prefill', text });
    this.onStateChange?.();
  }

  focus(): void {
    void vscode.commands.executeCommand('sessiontree.chat.focus');
  }

  private onAgentEvent(p: AgentEventParams): void {
    const change = this.conversation.apply(p);
    const e = p.event;
    if (p.uri === this.conversation.uri) {
      if (e.kind === 'delta' && e.delta === 'text') this.streamed.set(e.message, (this.streamed.get(e.message) ?? '') + e.text);
      if (e.kind === 'messageEnd' && e.item.role === 'assistant') {
        const final = e.item.blocks.map((b) => (b.kind === 'markdown' || b.kind === 'text' ? b.text : '')).join('');
        this.note('stream', { deltas: this.conversation.deltas, streamed: this.streamed.get(e.message) ?? '', final });
      }
      if (e.kind === 'agentEnd') this.reads.ended();
      if (e.kind === 'exited') {
        const tail = (e.stderrTail ?? []).slice(-5).join('\n');
        void vscode.window.showErrorMessage(`The ${this.conversation.status?.agent ?? ''} agent exited${tail ? `: ${tail}` : '.'}`);
      }
    }
    this.applyChange(change);
  }

  private applyChange(change: Change): void {
    switch (change.kind) {
      case 'none':
        return;
      case 'status':
        this.postStatus();
        this.onStateChange?.();
        return;
      case 'entries':
        this.dirtyAll = true;
        break;
      case 'entry':
        this.dirtyKeys.add(change.key);
        break;
    }
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    this.flushTimer = undefined;
    if (this.dirtyAll) this.postAll();
    else {
      for (const key of this.dirtyKeys) {
        const e = this.conversation.entry(key);
        if (e) void this.view?.webview.postMessage({ type: 'entry', key, html: renderEntry(e) });
      }
    }
    this.dirtyAll = false;
    this.dirtyKeys.clear();
    this.onStateChange?.();
  }

  private postAll(): void {
    if (this.view) this.view.title = this.ctl.info?.name ? `Chat — ${this.ctl.info.name}` : 'Chat';
    const entries = this.conversation.entries().map((e) => ({ key: e.key, html: renderEntry(e) }));
    const omitted = this.conversation.omitted;
    if (omitted) entries.unshift({ key: 'omitted', html: `<div class="entry empty" data-key="omitted">${omitted} earlier messages are not shown.</div>` });
    void this.view?.webview.postMessage({
      type: 'render',
      entries,
      hasSession: !!this.ctl.uri,
      empty: this.ctl.uri ? 'Empty conversation at this point.' : 'No session open.',
    });
    this.postStatus();
  }

  private postStatus(): void {
    const s = this.conversation.status;
    const available = agentAvailable(s);
    const tone = !s
      ? 'ok'
      : s.state === 'unavailable' || s.state === 'exited'
        ? 'error'
        : s.state === 'running' || s.state === 'starting'
          ? 'busy'
          : s.source === 'terminal' && !s.armed
            ? 'warn'
            : 'ok';
    const agent = s?.agent ?? 'the agent';
    const line = this.ctl.uri ? statusLine(s) + (this.sending ? ' · sending…' : '') : '';
    const running = this.conversation.running || s?.state === 'running';
    void vscode.commands.executeCommand('setContext', 'sessiontree.agentRunning', running);
    void this.view?.webview.postMessage({
      type: 'status',
      line,
      detail: this.ctl.uri ? statusDetail(s) : '',
      tone,
      running,
      sendLabel: available ? 'Send' : 'Append',
      placeholder: available
        ? `Message ${agent} (Enter to send, Shift+Enter for a new line, Esc Esc opens the tree)`
        : 'Append a message without an answer (Enter; Shift+Enter for a new line)',
      setting: statusSetting(s) ?? null,
    });
  }

  private async onMessage(m: FromPage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.postAll();
        void this.view?.webview.postMessage({ type: 'setInput', text: this.draft.text });
        if (this.draft.pendingPrefill !== undefined) void this.view?.webview.postMessage({ type: 'prefill', text: this.draft.pendingPrefill });
        return;
      case 'input':
        this.draft.text = m.text;
        this.draft.pendingPrefill = undefined;
        this.onStateChange?.();
        return;
      case 'focus':
        // `focusedView` does not follow focus into a webview: keys bound "when the chat has focus" use this.
        await vscode.commands.executeCommand('setContext', 'sessiontree.chatFocused', m.focused);
        this.note('focused', m.focused);
        return;
      case 'openTree':
        this.openTreeCount++;
        this.onStateChange?.();
        await vscode.commands.executeCommand('sessiontree.tree.focus');
        return;
      case 'openSetting':
        if (m.setting) await openSetting(m.setting);
        return;
      case 'stop':
        await this.stop();
        return;
      case 'send':
        await this.send(m.text);
        return;
    }
  }

  /** The text sent from `uri` leaves its input (the input on screen only when it is that session's). */
  private sent(uri: string): void {
    if (this.draft.sentFrom(uri)) void this.view?.webview.postMessage({ type: 'sent' });
    this.onStateChange?.();
  }

  /** Send: the agent answers; when it cannot run, the text is appended without an answer. */
  async send(text: string): Promise<void> {
    const uri = this.ctl.uri;
    if (!uri || !text.trim()) return;
    if (this.sending) return;
    const status = this.conversation.status;
    if (!agentAvailable(status)) {
      const setting = statusSetting(status);
      const why = `${status?.message ?? 'the agent cannot run'}${status ? ` (${statusAdvice(status)})` : ''}`;
      if (await this.append(text)) {
        this.applyChange(this.conversation.notice(`Appended without an answer: ${why}.`, 'warning'));
        void vscode.window.showWarningMessage(`Appended without an answer: ${why}.`, ...(setting ? ['Open Settings'] : [])).then((pick) => {
          if (pick && setting) void openSetting(setting);
        });
      }
      return;
    }
    this.conversation.startTurn();
    this.streamed.clear();
    this.applyChange({ kind: 'entries' });
    this.sending = true;
    this.postStatus();
    try {
      const res = await this.ctl.api.prompt({ uri, text }).finally(() => (this.sending = false));
      if (this.conversation.uri === uri) {
        this.conversation.status = res.agent;
        if (res.agent.state === 'running') this.conversation.running = true;
      }
      this.note('prompt', { turn: res.turn, text });
      this.sent(uri);
      this.postStatus();
    } catch (e) {
      await this.promptFailed(e, text);
    }
  }

  private async promptFailed(e: unknown, text: string): Promise<void> {
    const kind = errorKind(e);
    const agent = this.conversation.status?.agent;
    const { text: message, setting } = agentErrorText(kind, (e as { message?: string })?.message ?? errorMessage(e), agent);
    this.note('error', { kind, message });
    this.applyChange(this.conversation.notice(message, 'error'));
    // The state may have changed (not installed after all, exited): show it.
    if (this.conversation.uri) void this.loadStatus(this.conversation.uri);
    const actions = [...(setting ? ['Open Settings'] : []), ...(kind === 'agentNotInstalled' || kind === 'agentFailed' ? ['Append Without an Answer'] : [])];
    const pick = await vscode.window.showErrorMessage(message, ...actions);
    if (pick === 'Open Settings' && setting) await openSetting(setting);
    if (pick === 'Append Without an Answer') await this.append(text);
  }

  /**
   * Appends the text as a user message at the leaf, without running the agent. Not into a session
   * whose file does not exist yet (a pi session made by `/branch` is written with its first
   * assistant reply, as pi does): the message would live only in memory and be lost on quitting,
   * so the text stays in the input and the chat says why.
   */
  async append(text: string): Promise<boolean> {
    const uri = this.ctl.uri;
    if (!uri || !text.trim()) return false;
    if (notOnDisk(uri)) {
      const why = NOT_ON_DISK + ' Your text stays in the input.';
      this.note('append', { notOnDisk: true, text });
      this.applyChange(this.conversation.notice(`Not appended: ${why}`, 'warning'));
      void vscode.window.showWarningMessage(`Not appended: ${why}`);
      return false;
    }
    try {
      const res = await this.ctl.api.append({ uri, kind: 'user', text });
      this.note('append', { entryId: res.entryId ?? null, text });
      this.sent(uri);
      return true;
    } catch (e) {
      const { text: message } = agentErrorText(errorKind(e), (e as { message?: string })?.message ?? errorMessage(e), this.conversation.status?.agent);
      this.note('error', { kind: errorKind(e), message });
      void vscode.window.showErrorMessage(`Append failed: ${message}`);
      return false;
    }
  }

  /** Stops the agent's answer. */
  async stop(): Promise<void> {
    const uri = this.ctl.uri;
    if (!uri) return;
    try {
      const res = await this.ctl.api.abort({ uri });
      this.note('abort', res);
    } catch (e) {
      void vscode.window.showErrorMessage(`Stop failed: ${errorMessage(e)}`);
    }
  }

  private note(key: string, value: unknown): void {
    this.testLog[key] = value;
    this.onStateChange?.();
  }

  dispose(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.reads.dispose();
    this.subs.forEach((d) => d.dispose());
  }
}

/** Why a session the server holds is not on disk. */
const NOT_ON_DISK =
  'this new session is not on disk yet (pi writes a session with its first assistant reply), so a message appended without the agent would live only in memory and be lost on quitting.';

/** A file session whose file does not exist (yet): the server holds it in memory. */
function notOnDisk(uri: string): boolean {
  const u = vscode.Uri.parse(uri);
  return u.scheme === 'file' && !fs.existsSync(u.fsPath);
}

/**
 * Opens the Settings editor at `setting`. The agent settings are machine settings: in a remote
 * window (code-server, SSH) they live in the remote machine's settings, which the plain command's
 * User tab does not show.
 */
async function openSetting(setting: string): Promise<void> {
  if (vscode.env.remoteName) {
    try {
      // (Its argument must be an options object: a plain string is dropped.)
      await vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query: setting });
      return;
    } catch {
      // A VS Code without that command: the user settings at least.
    }
  }
  await vscode.commands.executeCommand('workbench.action.openSettings', setting);
}

function nonce(): string {
  let s = '';
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < 32; i++) s += chars.charAt(Math.floor(Math.random() * chars.length));
  return s;
}

function html(csp: string, script: string, style: string): string {
  const n = nonce();
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${csp}; script-src 'nonce-${n}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
</head>
<body>
<div id="log" aria-live="polite"><div class="empty">No session open.</div></div>
<div id="status"><div id="status-line"></div><button id="setting" class="secondary" type="button" hidden>Open Settings</button><button id="stop" type="button" hidden>Stop</button></div>
<div id="status-detail" hidden></div>
<form id="form"><textarea id="input" rows="2" placeholder="Message (Enter to send, Shift+Enter for a new line, Esc Esc opens the tree)" aria-label="Message"></textarea><button id="send" type="submit">Send</button></form>
<script nonce="${n}" src="${script}"></script>
</body></html>`;
}
