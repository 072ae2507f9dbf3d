/**
 * The user-facing flows that talk to the server: navigate (with the summary prompt and a
 * cancellable progress notification), /branch (a quick pick of user messages ranked by the
 * server), labels, search, the `/tree` quick pick, and handing the session to the agent's CLI.
 * Every decision (where the leaf goes, what text returns, which entries qualify) is the server's.
 */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { errorMessage, isCancellation } from './errors';
import type { ChatProvider } from './chatView';
import { agentCommand, Debounce, ROW_WIDTH, rowPlain, shellQuote } from './logic';
import type { NavigateResult, Row, SummarizeChoice } from './protocol';
import type { SessionController } from './session';
import type { SessionsProvider } from './sessionsView';
import type { Rewind } from './rewind';
import type { TreeProvider } from './treeView';

export interface Flows {
  ctl: SessionController;
  tree: TreeProvider;
  chat: ChatProvider;
  sessions: SessionsProvider;
  log: vscode.OutputChannel;
  /** Tests: what the last flow did. */
  record: (key: string, value: unknown) => void;
  /** Rewind points: keep or restore the files after a move, and on /branch. */
  rewind?: Rewind;
}

const navDebounce = new Debounce(400);

/** Whether to ask No summary / Summarize / Custom before a move. */
function askForSummary(f: Flows): boolean {
  const mode = vscode.workspace.getConfiguration('sessiontree').get<string>('branchSummary.prompt', 'auto');
  if (mode === 'always') return true;
  if (mode === 'never') return false;
  return f.ctl.api.summariesEnabled;
}

/** The summary choice; `undefined` = the user backed out (Escape). */
async function chooseSummary(): Promise<{ choice: SummarizeChoice; custom?: string } | undefined> {
  for (;;) {
    const picked = await vscode.window.showQuickPick(
      [
        { label: 'No summary', choice: 'none' as const },
        { label: 'Summarize', choice: 'summarize' as const },
        { label: 'Summarize with custom prompt', choice: 'custom' as const },
      ],
      { title: 'Summarize branch?', placeHolder: 'Leave a summary of the branch you are leaving' },
    );
    if (!picked) return undefined;
    if (picked.choice !== 'custom') return { choice: picked.choice };
    const custom = await vscode.window.showInputBox({
      title: 'Custom summarization instructions',
      prompt: 'What should the summary focus on? (empty returns to the choice)',
    });
    if (custom === undefined || custom.trim() === '') continue;
    return { choice: 'custom', custom };
  }
}

/** Navigates to `targetId` (default: the selection); `ask` asks about a summary whatever the server says. */
export async function navigate(f: Flows, targetId: string | undefined, ask = false): Promise<NavigateResult | undefined> {
  const uri = f.ctl.uri;
  const id = targetId ?? f.tree.selectedRowId;
  if (!uri || !id) return undefined;
  if (!navDebounce.accept(`${uri}#${id}`)) return undefined;
  f.ctl.select(id);
  let choice: SummarizeChoice = 'none';
  let custom: string | undefined;
  if (ask || askForSummary(f)) {
    const c = await chooseSummary();
    if (!c) {
      f.record('navigate', { targetId: id, backedOut: true });
      await vscode.commands.executeCommand('sessiontree.tree.focus');
      return undefined;
    }
    choice = c.choice;
    custom = c.custom;
  }
  const run = (token?: vscode.CancellationToken) =>
    f.ctl.api.navigate({ uri, targetId: id, summarize: choice, customInstructions: custom ?? null }, token);
  let result: NavigateResult;
  try {
    result =
      choice === 'none'
        ? await run()
        : await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: 'Summarizing branch…', cancellable: true },
            (_p, token) => run(token),
          );
  } catch (e) {
    if (isCancellation(e)) {
      f.record('navigate', { targetId: id, cancelled: true });
      void vscode.window.showInformationMessage('Navigation cancelled; nothing moved.');
      return undefined;
    }
    f.record('navigate', { targetId: id, error: errorMessage(e) });
    void vscode.window.showErrorMessage(`Navigate failed: ${errorMessage(e)}`);
    return undefined;
  }
  f.record('navigate', { targetId: id, ...result });
  if (result.alreadyAtThisPoint) {
    void vscode.window.showInformationMessage('Already at this point');
  } else if (result.cancelled) {
    void vscode.window.showInformationMessage('Navigation cancelled by a hook; nothing moved.');
  }
  if (result.editorText) {
    f.chat.prefill(result.editorText);
    f.chat.focus();
  }
  await f.ctl.refresh({ reason: 'navigate', revealLeaf: false });
  if (f.rewind && !result.alreadyAtThisPoint && !result.cancelled) await f.rewind.afterNavigate(uri, id);
  return result;
}

/** Rows of user messages, ranked and matched by the server for `search`. */
async function userRows(f: Flows, search: string): Promise<Row[]> {
  const uri = f.ctl.uri;
  if (!uri) return [];
  const res = await f.ctl.api.rows({ uri, filter: 'userOnly', search, width: ROW_WIDTH, height: 0 });
  return res.rows.filter((r) => r.id);
}

type RowPick = vscode.QuickPickItem & { id: string };

function rowPick(r: Row): RowPick {
  return {
    label: rowPlain(r),
    description: r.isLeaf ? 'leaf' : r.onActivePath ? 'active path' : undefined,
    alwaysShow: true,
    id: r.id as string,
  };
}

/**
 * Keeps a quick pick in the order its items were given. VS Code otherwise re-sorts the items by
 * its own label match as the user types (`sortByLabel`, on by default), so the first item shown is
 * not the server's first: the list must show the server's ranking, and Enter act on what is
 * highlighted. `sortByLabel` is not in the typed API (a proposal the extension host honours
 * anyway); where a VS Code refuses it, the items keep `alwaysShow` and the server's order is lost
 * only to VS Code's sort.
 */
function keepServerOrder(qp: vscode.QuickPick<vscode.QuickPickItem>): void {
  try {
    (qp as { sortByLabel?: boolean }).sortByLabel = false;
  } catch {
    // An extension host that checks proposals: nothing else keeps the order.
  }
}

/** A quick pick whose items come from the server for what the user typed. */
function serverPick(f: Flows, title: string, load: (search: string) => Promise<Row[]>): Promise<string | undefined> {
  return new Promise((resolve) => {
    const qp = vscode.window.createQuickPick<RowPick>();
    qp.title = title;
    qp.placeholder = 'Type to search (server-side)';
    qp.matchOnDescription = false;
    keepServerOrder(qp);
    let seq = 0;
    const update = async (value: string) => {
      const mine = ++seq;
      qp.busy = true;
      try {
        const rows = await load(value);
        if (mine === seq) {
          qp.items = rows.map(rowPick);
          f.record('pick', { title, value, labels: qp.items.map((i) => i.label), ids: qp.items.map((i) => i.id) });
          // Keep the server's best match active so that Enter picks it.
          if (qp.items.length) qp.activeItems = [qp.items[0]];
        }
      } catch (e) {
        f.log.appendLine(`${title}: ${errorMessage(e)}`);
      } finally {
        if (mine === seq) qp.busy = false;
      }
    };
    let done = false;
    qp.onDidChangeValue((v) => void update(v));
    qp.onDidAccept(() => {
      done = true;
      // VS Code selects the highlighted item on Enter: that one, whatever arrived since.
      resolve((qp.selectedItems[0] ?? qp.activeItems[0])?.id);
      qp.hide();
    });
    qp.onDidHide(() => {
      if (!done) resolve(undefined);
      qp.dispose();
    });
    qp.show();
    void update('');
  });
}

export async function branch(f: Flows, entryId?: string): Promise<void> {
  const uri = f.ctl.uri;
  if (!uri) {
    void vscode.window.showWarningMessage('Open a session first.');
    return;
  }
  const id = entryId ?? (await serverPick(f, '/branch — fork before a user message', (s) => userRows(f, s)));
  if (!id) return;
  const files = f.rewind ? await f.rewind.chooseForBranch(uri, id) : 'conversation';
  if (!files) return;
  if (files !== 'conversation' && f.rewind) {
    const restored = await f.rewind.restore(uri, id, false);
    if (!restored || files === 'files') return;
  }
  try {
    const res = await f.ctl.api.branch({ uri, entryId: id });
    f.record('branch', { entryId: id, ...res });
    if (res.cancelled) {
      void vscode.window.showInformationMessage('Branch cancelled by a hook.');
      return;
    }
    await f.sessions.refresh().catch(() => undefined);
    if (res.newUri) {
      // The server keeps an unwritten fork (pi writes it with the first reply) open for us.
      await f.ctl.open(res.newUri);
      f.sessions.setCurrent(f.ctl.uri);
      if (!res.written) {
        void vscode.window.showInformationMessage(
          `New session ${res.newPath ?? res.newUri} is not on disk yet: pi writes a session with its first assistant reply. ` +
            'Send gives it to pi, which writes it with its answer. Until then the server holds it in memory: the chat does not append into it without the agent, and it is gone once another session is opened.',
        );
      }
    }
    f.chat.prefill(res.editorText);
    f.chat.focus();
  } catch (e) {
    f.record('branch', { error: errorMessage(e) });
    void vscode.window.showErrorMessage(`Branch failed: ${errorMessage(e)}`);
  }
}

export async function label(f: Flows, entryId?: string, clear = false): Promise<void> {
  const uri = f.ctl.uri;
  const id = entryId ?? f.tree.selectedRowId ?? f.ctl.selectedId;
  if (!uri || !id) return;
  const node = f.tree.nodeFor(id);
  let value: string | undefined = '';
  if (!clear) {
    value = await vscode.window.showInputBox({
      title: 'Label',
      prompt: 'Label for this entry (empty clears it)',
      value: node?.row.label ?? '',
    });
    if (value === undefined) return;
  }
  try {
    const res = await f.ctl.api.setLabel({ uri, targetId: id, label: value.trim() ? value.trim() : null });
    f.ctl.select(id);
    f.record('label', { targetId: id, label: value, ...res });
    await f.ctl.refresh({ reason: 'label', revealLeaf: false });
  } catch (e) {
    void vscode.window.showErrorMessage(`Label failed: ${errorMessage(e)}`);
  }
}

/**
 * Search as you type, as the agent's `/tree` does: every key narrows the Tree at once (the
 * controller keeps at most one request in flight and sends the latest text when it returns, so
 * typing never queues answers on a huge session). Enter keeps the search; Escape puts back the one
 * the box opened with. The box stays open while the user clicks elsewhere (a row, to navigate), so
 * that only those two keys close it.
 */
export function search(f: Flows): Promise<void> {
  return new Promise((resolve) => {
    const box = vscode.window.createInputBox();
    const before = f.ctl.search;
    let accepted = false;
    box.title = 'Search the tree';
    box.prompt = 'The tree narrows as you type (words separated by spaces, all must match). Enter keeps it; Escape puts back the previous search.';
    box.placeholder = 'Search';
    box.value = before;
    box.ignoreFocusOut = true;
    box.onDidChangeValue((v) => {
      f.ctl.typeSearch(v.trim()).catch((e) => f.log.appendLine(`search: ${errorMessage(e)}`));
    });
    box.onDidAccept(() => {
      accepted = true;
      box.hide();
    });
    box.onDidHide(() => {
      const value = box.value.trim();
      box.dispose();
      f.ctl
        .typeSearch(accepted ? value : before)
        .catch((e) => f.log.appendLine(`search: ${errorMessage(e)}`))
        .finally(() => resolve());
    });
    box.show();
  });
}

/** `/tree`: focus the Tree view, or a quick pick of the rows when the panel is hidden. */
export async function treeCommand(f: Flows): Promise<void> {
  if (f.tree.view.visible) {
    await vscode.commands.executeCommand('sessiontree.tree.focus');
    return;
  }
  const uri = f.ctl.uri;
  if (!uri) {
    await vscode.commands.executeCommand('sessiontree.tree.focus');
    return;
  }
  const id = await serverPick(f, '/tree — jump to an entry', async (s) => {
    const res = await f.ctl.api.rows({ uri, filter: f.ctl.filter, search: s, width: ROW_WIDTH, height: 0 });
    return res.rows.filter((r) => r.id);
  });
  if (id) await navigate(f, id);
}

/** Opens the agent's own CLI on this session in a terminal. */
export function handOff(f: Flows): void {
  const info = f.ctl.info;
  const uri = f.ctl.uri;
  if (!info || !uri) {
    void vscode.window.showWarningMessage('Open a session first.');
    return;
  }
  if (!uri.startsWith('file:')) {
    void vscode.window.showWarningMessage("The agent's CLI keeps its sessions in files; this session is kept in a session store.");
    return;
  }
  const cfg = vscode.workspace.getConfiguration('sessiontree');
  const file = vscode.Uri.parse(uri).fsPath;
  const { command, args } = agentCommand(
    info.dialect,
    file,
    info.dialect === 'pi' ? cfg.get<string>('piCommand') : cfg.get<string>('ompCommand'),
  );
  // The session's own working directory when it exists here (the agent resolves paths from it).
  const cwd = info.cwd && fs.existsSync(info.cwd) ? info.cwd : undefined;
  const term = vscode.window.createTerminal({ name: `${command} — ${info.name ?? info.sessionId}`, cwd });
  term.show();
  term.sendText([command, ...args].map(shellQuote).join(' '));
  f.record('handOff', { command, args });
}

/**
 * Installs the sessiontree bridge into pi's or omp's extensions folder, so an agent the user runs
 * in a terminal can be driven from the editor (after its restart).
 */
export async function installBridge(f: Flows): Promise<void> {
  const dialect = f.ctl.info?.dialect;
  const items = (['pi', 'omp'] as const).map((agent) => ({
    label: agent,
    description: agent === dialect ? 'this session\u2019s agent' : undefined,
    agent,
  }));
  if (dialect === 'omp') items.reverse();
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Install the sessiontree bridge for agents run in a terminal',
    placeHolder: 'Which agent',
  });
  if (!picked) return;
  try {
    const res = await f.ctl.api.installBridge({ agent: picked.agent });
    f.record('installBridge', res);
    const what = res.written ? `Installed the bridge at ${res.path}` : `The bridge is already installed at ${res.path}`;
    void vscode.window.showInformationMessage(
      `${what}. Restart ${picked.agent} in your terminal; the chat and the tree then drive it (run /sessiontree there once to let the editor move its leaf).`,
    );
  } catch (e) {
    void vscode.window.showErrorMessage(`Install the bridge failed: ${errorMessage(e)}`);
  }
}
