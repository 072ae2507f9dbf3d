/**
 * The Sessions view: the workspace's session files as `sessionTree/listSessions` reports them
 * (name, first message, age, dialect), the one an agent is writing marked live, the one on screen
 * marked open. Clicking one opens it in the Tree and Chat views.
 */
import * as vscode from 'vscode';
import type { Api } from './api';
import { entryCount, forkSource, sessionDescription, sessionLabel, visibleText } from './logic';
import type { SessionInfo } from './protocol';

export class SessionsProvider implements vscode.TreeDataProvider<SessionInfo>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<SessionInfo | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  sessions: SessionInfo[] = [];
  current: string | undefined;
  /** Told each listing (the end-to-end test records what the view holds). */
  onListed: ((sessions: SessionInfo[], unavailable: string[]) => void) | undefined;
  readonly view: vscode.TreeView<SessionInfo>;

  constructor(private readonly api: Api) {
    this.view = vscode.window.createTreeView('sessiontree.sessions', { treeDataProvider: this });
    // Ages and the live marker go stale: list again whenever the view comes back into sight.
    this.view.onDidChangeVisibility((e) => {
      if (e.visible) void this.refresh().catch(() => undefined);
    });
  }

  async refresh(): Promise<SessionInfo[]> {
    const res = await this.api.listSessions({});
    // Redraw only on a real change: a redraw retires the rendered items' commands, and a click
    // landing on a retired item fails ("command not found").
    const key = (list: SessionInfo[]) =>
      JSON.stringify(
        list.map((x) => [x.uri, x.name, x.firstUserMessage, x.liveWriter, x.entryCount, x.parentSession, Math.floor(x.modifiedMs / 60_000)]),
      );
    const changed = key(res.sessions) !== key(this.sessions);
    this.sessions = res.sessions;
    const down = (res.unavailable ?? []).map((u) => `${u.store}: ${u.message}`);
    this.view.message = down.length
      ? `Not listed: ${down.join('; ')}`
      : this.sessions.length
        ? undefined
        : 'No omp/pi sessions for this workspace.';
    if (changed) this.emitter.fire(undefined);
    this.onListed?.(this.sessions, down);
    return this.sessions;
  }

  setCurrent(uri: string | undefined): void {
    this.current = uri;
    this.emitter.fire(undefined);
  }

  getTreeItem(s: SessionInfo): vscode.TreeItem {
    const item = new vscode.TreeItem(sessionLabel(s));
    item.id = s.uri;
    const open = s.uri === this.current;
    item.description = sessionDescription(s, this.sessions, Date.now());
    // Open = the eye; live (an agent is writing) = green.
    item.iconPath = new vscode.ThemeIcon(
      open ? 'eye' : s.liveWriter ? 'pulse' : 'comment-discussion',
      s.liveWriter ? new vscode.ThemeColor('charts.green') : undefined,
    );
    const md = new vscode.MarkdownString();
    md.appendMarkdown(`**${sessionLabel(s)}**${open ? ' (open)' : ''}\n\n`);
    if (s.firstUserMessage) md.appendText(visibleText(s.firstUserMessage) + '\n\n');
    md.appendText(`${s.dialect} · ${entryCount(s.entryCount)} · ${s.modified}\n\n`);
    const source = forkSource(s, this.sessions);
    if (source) md.appendText(`Forked from ${source} (${s.parentSession})\n\n`);
    md.appendText(s.path);
    item.tooltip = md;
    item.contextValue = `session ${s.dialect}${s.liveWriter ? ' live' : ''}${open ? ' open' : ''}`;
    item.command = { command: 'sessiontree.openSession', title: 'Open session', arguments: [s.uri] };
    return item;
  }

  getChildren(s?: SessionInfo): SessionInfo[] {
    return s ? [] : this.sessions;
  }

  getParent(): undefined {
    return undefined;
  }

  dispose(): void {
    this.view.dispose();
    this.emitter.dispose();
  }
}
