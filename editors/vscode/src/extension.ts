/**
 * Activation: starts the language client, builds the Sessions, Tree and Chat views, registers the
 * commands, and opens the session an agent is writing (else the newest). Wiring only; each view
 * and flow lives in its own module.
 */
import * as vscode from 'vscode';
import { Api, initializationOptions } from './api';
import { errorMessage } from './errors';
import { ChatProvider } from './chatView';
import * as flows from './flows';
import { summarizeWithLm, testHookSummary } from './lmSummary';
import { defaultSession, isFilterMode, sessionDescription, sessionLabel } from './logic';
import { SessionController } from './session';
import { SessionsProvider } from './sessionsView';
import { Rewind } from './rewind';
import { TestState } from './testState';
import { TreeProvider } from './treeView';

let api: Api | undefined;

export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('Session Tree', { log: true });
  ctx.subscriptions.push(log);
  const state = new TestState(process.env.SESSIONTREE_TEST_STATE);
  const cfg = vscode.workspace.getConfiguration('sessiontree');
  const useLm = cfg.get<boolean>('branchSummary.useLanguageModel', false);
  const testHookDelay = Number(process.env.SESSIONTREE_TEST_HOOK_DELAY_MS ?? '');
  const testHook = Number.isFinite(testHookDelay) && testHookDelay > 0;
  try {
    api = await Api.start(ctx, log, useLm || testHook);
  } catch (e) {
    const msg = errorMessage(e);
    log.appendLine(msg);
    state.set('startError', msg);
    // Say it where the user looks: in the panel, not only in a toast.
    const empty: vscode.TreeDataProvider<never> = { getTreeItem: (x) => x, getChildren: () => [] };
    for (const id of ['sessiontree.sessions', 'sessiontree.tree']) {
      const view = vscode.window.createTreeView(id, { treeDataProvider: empty });
      view.message = `The sessiontree server did not start: ${msg}`;
      ctx.subscriptions.push(view);
    }
    void vscode.window.showErrorMessage(msg, 'Open Settings').then((pick) => {
      if (pick) void vscode.commands.executeCommand('workbench.action.openSettings', 'sessiontree.serverPath');
    });
    return;
  }
  const a = api;
  state.set('serverInfo', a.client.initializeResult?.serverInfo ?? null);
  state.set('stores', (initializationOptions().stores ?? []).map((s) => s.url));
  const ctl = new SessionController(a, log);
  const sessions = new SessionsProvider(a);
  sessions.onListed = (list, unavailable) => state.set('listed', { uris: list.map((x) => x.uri), unavailable });
  const tree = new TreeProvider(ctl);
  const chat = new ChatProvider(ctl, log, ctx.extensionUri);
  ctx.subscriptions.push(ctl, sessions, tree, chat);
  ctx.subscriptions.push(vscode.window.registerWebviewViewProvider('sessiontree.chat', chat, { webviewOptions: { retainContextWhenHidden: true } }));
  const setContext = () => {
    void vscode.commands.executeCommand('setContext', 'sessiontree.filter', ctl.filter);
    void vscode.commands.executeCommand('setContext', 'sessiontree.searching', ctl.search !== '');
    void vscode.commands.executeCommand('setContext', 'sessiontree.follow', ctl.follow);
    void vscode.commands.executeCommand('setContext', 'sessiontree.hasSession', !!ctl.uri);
  };
  setContext();
  const snapshot = () => {
    state.set('session', ctl.uri ?? null);
    state.set('filter', ctl.filter);
    state.set('search', ctl.rowsSearch);
    state.set('leaf', ctl.leaf ?? null);
    state.set('revision', ctl.revision ?? null);
    state.set('lines', ctl.rows?.lines ?? []);
    state.set('window', ctl.rows ? { start: ctl.rows.windowStart, rows: ctl.rows.rows.length, total: ctl.rows.totalRows } : null);
    state.set('labels', (ctl.rows?.rows ?? []).filter((r) => r.label).map((r) => ({ id: r.id, label: r.label })));
    state.set('folded', ctl.folded);
    state.set('chatInput', chat.inputText);
    state.set('chatMessages', chat.transcript.length);
    state.set('openTree', chat.openTreeCount);
    state.set('chatAgent', chat.agentStatus ?? null);
    state.set('chatLog', chat.testLog);
  };
  tree.onRendered = () => {
    setContext();
    snapshot();
  };
  chat.onStateChange = snapshot;
  tree.onSelection = (id) => state.set('selected', id ?? null);
  const rewind = new Rewind(a, (k, v) => state.set(k, v));
  ctx.subscriptions.push(rewind);
  tree.attachRewind(rewind);
  const f: flows.Flows = { ctl, tree, chat, sessions, log, record: (k, v) => state.set(k, v), rewind };

  ctx.subscriptions.push(
    ctl.onDidChangeSession((info) => sessions.setCurrent(info?.uri)),
    a.onDidBranch(() => void sessions.refresh().catch(() => undefined)),
  );
  if (useLm || testHook) {
    ctx.subscriptions.push(
      a.onBeforeTree((p, token) =>
        (testHook ? testHookSummary(p, testHookDelay, token) : summarizeWithLm(a, p, token)).catch(() => ({})),
      ),
      a.onBeforeBranch(() => ({ cancel: false })),
    );
  }

  const reg = (id: string, fn: (...args: never[]) => unknown) =>
    ctx.subscriptions.push(vscode.commands.registerCommand(id, fn as (...args: unknown[]) => unknown));
  const guard = (fn: () => Promise<unknown>) => () =>
    fn().catch((e) => void vscode.window.showErrorMessage(`Session Tree: ${errorMessage(e)}`));

  reg('sessiontree.openSession', async (uri?: string) => {
    let target = uri;
    if (!target) {
      const now = Date.now();
      const picked = await vscode.window.showQuickPick(
        sessions.sessions.map((s) => ({
          label: sessionLabel(s),
          description: sessionDescription(s, sessions.sessions, now),
          uri: s.uri,
        })),
        { title: 'Open session', matchOnDescription: true },
      );
      target = picked?.uri;
    }
    if (!target) return;
    try {
      await ctl.open(target);
    } catch (e) {
      void vscode.window.showErrorMessage(`Open failed: ${errorMessage(e)}`);
    }
  });
  reg('sessiontree.openFile', async () => {
    const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Session files': ['jsonl'] } });
    if (picked?.[0]) await vscode.commands.executeCommand('sessiontree.openSession', picked[0].toString());
  });
  reg('sessiontree.refreshSessions', guard(() => sessions.refresh()));
  reg('sessiontree.refresh', guard(() => ctl.refresh()));
  // Entry commands get an entry id (a row's own command), a row (item menus), or nothing (keys,
  // palette: the selection).
  type EntryArg = string | { row?: { id?: string | null } } | undefined;
  const idOf = (arg: EntryArg) => (typeof arg === 'string' ? arg : (arg?.row?.id ?? undefined));
  reg('sessiontree.navigate', (arg?: EntryArg) => flows.navigate(f, idOf(arg)));
  reg('sessiontree.select', () => flows.navigate(f, undefined));
  reg('sessiontree.navigateWithSummary', (arg?: EntryArg) => flows.navigate(f, idOf(arg), true));
  reg('sessiontree.tree', () => flows.treeCommand(f));
  reg('sessiontree.branch', (arg?: EntryArg) => flows.branch(f, idOf(arg)));
  reg('sessiontree.branchHere', (arg?: EntryArg) => flows.branch(f, idOf(arg)));
  reg('sessiontree.label', (arg?: EntryArg) => flows.label(f, idOf(arg)));
  reg('sessiontree.clearLabel', (arg?: EntryArg) => flows.label(f, idOf(arg), true));
  const entryOf = (arg?: EntryArg) => idOf(arg) ?? tree.selectedRowId ?? ctl.selectedId;
  reg('sessiontree.rewind.compare', async (arg?: EntryArg) => {
    const id = entryOf(arg);
    if (ctl.uri && id) await rewind.compare(ctl.uri, id);
  });
  reg('sessiontree.rewind.restore', async (arg?: EntryArg) => {
    const id = entryOf(arg);
    if (ctl.uri && id) await rewind.restore(ctl.uri, id);
  });
  reg('sessiontree.rewind.undo', async () => {
    if (ctl.uri) await rewind.undo(ctl.uri);
  });
  // Folding: pi's keys (the focused row), and the item menu's Fold / Unfold.
  const focusedOf = (arg?: EntryArg) => idOf(arg) ?? tree.selectedRowId;
  reg('sessiontree.foldOrUp', (arg?: EntryArg) => guard(() => tree.foldKey(focusedOf(arg), -1))());
  reg('sessiontree.unfoldOrDown', (arg?: EntryArg) => guard(() => tree.foldKey(focusedOf(arg), 1))());
  reg('sessiontree.fold', (arg?: EntryArg) => guard(async () => {
    const id = focusedOf(arg);
    if (id) await ctl.setFolded(id, true);
  })());
  reg('sessiontree.unfold', (arg?: EntryArg) => guard(async () => {
    const id = focusedOf(arg);
    if (id) await ctl.setFolded(id, false);
  })());
  reg('sessiontree.search', () => flows.search(f));
  reg('sessiontree.clearSearch', guard(() => ctl.setSearch('')));
  // Pressed in the tree, a filter key gets the row the keyboard is on (keybinding args
  // `$focusedTreeItem`): the new filter keeps that row in view, as the agent keeps its cursor's.
  const keepFocused = (arg?: EntryArg) => {
    const id = idOf(arg);
    if (id) ctl.select(id);
  };
  reg('sessiontree.filterNext', (arg?: EntryArg) => guard(() => (keepFocused(arg), ctl.cycle(1)))());
  reg('sessiontree.filterPrevious', (arg?: EntryArg) => guard(() => (keepFocused(arg), ctl.cycle(-1)))());
  reg('sessiontree.pickFilter', async () => {
    const modes = [
      { label: 'Default', mode: 'default' as const, description: 'Alt+D' },
      { label: 'No tools', mode: 'noTools' as const, description: 'Alt+T' },
      { label: 'User messages only', mode: 'userOnly' as const, description: 'Alt+U' },
      { label: 'Labelled only', mode: 'labeledOnly' as const, description: 'Alt+L' },
      { label: 'All entries', mode: 'all' as const, description: 'Alt+A' },
    ];
    const picked = await vscode.window.showQuickPick(
      modes.map((m) => ({ ...m, picked: m.mode === ctl.filter })),
      { title: 'Tree filter' },
    );
    if (picked) await ctl.setFilter(picked.mode);
  });
  reg('sessiontree.filter', (mode?: string) => (isFilterMode(mode) ? ctl.jump(mode) : undefined));
  for (const mode of ['default', 'noTools', 'userOnly', 'labeledOnly', 'all'] as const) {
    reg(`sessiontree.filter.${mode}`, (arg?: EntryArg) => guard(() => (keepFocused(arg), ctl.jump(mode)))());
  }
  reg('sessiontree.revealLeaf', guard(() => tree.revealLeaf(true)));
  reg('sessiontree.pageWindow', (direction?: number) => tree.page(direction === -1 ? -1 : 1));
  reg('sessiontree.followOn', () => ctl.setFollow(true));
  reg('sessiontree.followOff', () => ctl.setFollow(false));
  reg('sessiontree.handOff', () => flows.handOff(f));
  reg('sessiontree.focusChat', () => chat.focus());
  reg('sessiontree.restartServer', async () => {
    try {
      await a.client.restart();
      await sessions.refresh();
      if (ctl.uri) await ctl.open(ctl.uri);
      state.set('restarted', (Date.now()));
    } catch (e) {
      void vscode.window.showErrorMessage(`Restart failed: ${errorMessage(e)}`);
    }
  });
  reg('sessiontree.send', (text?: string) => chat.send(typeof text === 'string' ? text : chat.inputText));
  reg('sessiontree.appendWithoutAgent', (text?: string) => chat.append(typeof text === 'string' ? text : chat.inputText));
  reg('sessiontree.stop', () => chat.stop());
  reg('sessiontree.installBridge', () => flows.installBridge(f));

  ctx.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('sessiontree.follow')) {
        ctl.setFollow(vscode.workspace.getConfiguration('sessiontree').get<boolean>('follow', true));
      }
      if (e.affectsConfiguration('sessiontree.extraRoots')) void sessions.refresh().catch(() => undefined);
      if (e.affectsConfiguration('sessiontree.agent')) {
        // The server takes the agent's settings when it starts.
        void vscode.window
          .showInformationMessage('Session Tree: the agent settings apply when the server restarts.', 'Restart the Server')
          .then((pick) => pick && vscode.commands.executeCommand('sessiontree.restartServer'));
      }
      // The server takes its stores at start only.
      if (e.affectsConfiguration('sessiontree.stores')) void vscode.commands.executeCommand('sessiontree.restartServer');
      if (e.affectsConfiguration('sessiontree.branchSummary.prompt')) {
        state.set('summaryPrompt', vscode.workspace.getConfiguration('sessiontree').get('branchSummary.prompt'));
      }
    }),
  );

  try {
    const list = await sessions.refresh();
    state.set('sessions', list.map((s) => ({ uri: s.uri, name: s.name, live: s.liveWriter ?? false })));
    const first = defaultSession(list);
    if (first) await ctl.open(first.uri);
  } catch (e) {
    log.appendLine(`initial listing: ${errorMessage(e)}`);
    state.set('listError', errorMessage(e));
  }
  state.set('activatedOk', true);
}

export async function deactivate(): Promise<void> {
  await api?.stop();
}
