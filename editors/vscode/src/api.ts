/**
 * The language client: finds and starts `sessiontree lsp`, declares the client capabilities, and
 * exposes one typed function per `sessionTree/…` request. Owns nothing else; the method names come
 * from `protocol.ts`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  CancellationToken,
  ClientCapabilities,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  StaticFeature,
} from 'vscode-languageclient/node';
import { agentSettings } from './agentText';
import { NotificationFanOut } from './notifications';
import { resolveServerPath } from './logic';
import * as P from './protocol';

/** Declares `experimental.sessionTree` (hooks, the agent's dialogs) in the client capabilities. */
class SessionTreeCapabilities implements StaticFeature {
  constructor(private readonly hooks: boolean) {}
  getState(): FeatureState {
    return { kind: 'static' };
  }
  fillClientCapabilities(caps: ClientCapabilities): void {
    const experimental = (caps.experimental ?? {}) as Record<string, unknown>;
    const mine: P.ClientExperimental = { hooks: this.hooks, agentDialogs: true };
    experimental[P.EXPERIMENTAL_KEY] = mine;
    caps.experimental = experimental;
  }
  initialize(): void {}
  clear(): void {}
}

export function findServer(ctx: vscode.ExtensionContext): string | undefined {
  const cfg = vscode.workspace.getConfiguration('sessiontree');
  const roots = [
    ...(vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    path.resolve(ctx.extensionPath, '..', '..'),
  ];
  return resolveServerPath({
    setting: cfg.get<string>('serverPath'),
    pathEnv: process.env.PATH,
    repoRoots: roots,
    exists: (p) => {
      try {
        return fs.statSync(p).isFile();
      } catch {
        return false;
      }
    },
    join: path.join,
    delimiter: path.delimiter,
  });
}

export function initializationOptions(): P.InitializationOptions {
  const cfg = vscode.workspace.getConfiguration('sessiontree');
  const opts: P.InitializationOptions = { extraRoots: cfg.get<string[]>('extraRoots') ?? [] };
  const omp = cfg.get<string>('ompAgentDir');
  const pi = cfg.get<string>('piAgentDir');
  const live = cfg.get<number>('liveWriterSeconds');
  if (omp) opts.ompAgentDir = omp;
  if (pi) opts.piAgentDir = pi;
  if (typeof live === 'number' && live > 0) opts.liveWriterSeconds = live;
  // The server's summary settings from the *user* settings only (never a workspace's own
  // settings.json): a command, the API key's variable and extra CAs are taken only from here. The
  // merged section still reaches the server through didChangeConfiguration for the other keys.
  const summary = cfg.inspect<unknown>('branchSummary')?.globalValue;
  if (summary !== undefined && summary !== null) opts.branchSummary = summary;
  opts.agent = agentSettings((key) => cfg.inspect(key)?.globalValue);
  // Session stores and their credentials from the user settings only, likewise.
  const stores = cfg.inspect<P.StoreSettings[]>('stores')?.globalValue;
  if (Array.isArray(stores) && stores.length) opts.stores = stores;
  return opts;
}

/** Glob patterns of session files: the agents' session folders and the configured folders. */
export function sessionFilePatterns(): string[] {
  const cfg = vscode.workspace.getConfiguration('sessiontree');
  const dirs = [
    cfg.get<string>('ompAgentDir') ? path.join(cfg.get<string>('ompAgentDir') as string, 'sessions') : '',
    cfg.get<string>('piAgentDir') ? path.join(cfg.get<string>('piAgentDir') as string, 'sessions') : '',
    process.env.PI_CODING_AGENT_DIR ? path.join(process.env.PI_CODING_AGENT_DIR, 'sessions') : '',
    ...(cfg.get<string[]>('extraRoots') ?? []),
  ].filter(Boolean);
  return ['**/.omp/agent/sessions/**/*.jsonl', '**/.pi/agent/sessions/**/*.jsonl', ...dirs.map((d) => `${d.replace(/\\/g, '/')}/**/*.jsonl`)];
}

export class Api {
  /** The server's notifications, each to every listener (see `NotificationFanOut`). */
  private readonly notifications: NotificationFanOut;

  private constructor(readonly client: LanguageClient) {
    this.notifications = new NotificationFanOut(
      (method, handler) => client.onNotification(method, handler),
      (method, e) => client.outputChannel.appendLine(`${method}: a listener failed: ${e instanceof Error ? e.message : String(e)}`),
    );
  }

  static async start(ctx: vscode.ExtensionContext, output: vscode.LogOutputChannel, hooks: boolean): Promise<Api> {
    const command = findServer(ctx);
    if (!command) {
      throw new Error(
        'sessiontree: the `sessiontree` binary was not found. Set `sessiontree.serverPath`, put it on PATH, or build it with `cargo build -p sessiontree`.',
      );
    }
    output.appendLine(`starting ${command} lsp`);
    const serverOptions: ServerOptions = { command, args: ['lsp'] };
    const clientOptions: LanguageClientOptions = {
      // Session files only (hover, outline, code lenses, diagnostics): the agents' folders and the
      // configured ones, never every .jsonl of the workspace.
      documentSelector: sessionFilePatterns().map((pattern) => ({ scheme: 'file', pattern })),
      // The server reads its settings (summaries, providers) from the `sessiontree` section.
      synchronize: { configurationSection: 'sessiontree' },
      // Read again at each (re)start, so "Restart the Server" applies changed settings.
      initializationOptions: () => initializationOptions(),
      outputChannel: output,
    };
    const client = new LanguageClient('sessiontree', 'Session Tree', serverOptions, clientOptions);
    client.registerFeature(new SessionTreeCapabilities(hooks));
    await client.start();
    return new Api(client);
  }

  /** The server's `experimental.sessionTree`. */
  get serverExperimental(): P.ServerExperimental | undefined {
    const exp = this.client.initializeResult?.capabilities.experimental as Record<string, unknown> | undefined;
    return exp?.[P.EXPERIMENTAL_KEY] as P.ServerExperimental | undefined;
  }

  /**
   * Whether the server says branch summaries are enabled: a `summaries` / `branchSummary` feature,
   * or `experimental.sessionTree.branchSummary.enabled` (the summaries issue's announcement).
   */
  get summariesEnabled(): boolean {
    const exp = this.serverExperimental as (P.ServerExperimental & { branchSummary?: boolean | { enabled?: boolean } }) | undefined;
    if (!exp) return false;
    const bs = exp.branchSummary;
    if (bs === true || (typeof bs === 'object' && bs?.enabled === true)) return true;
    return (exp.features ?? []).some((f) => f === 'summaries' || f === 'branchSummary');
  }

  private req<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> {
    return token ? this.client.sendRequest<R>(method, params, token) : this.client.sendRequest<R>(method, params);
  }

  listSessions(p: P.ListSessionsParams): Promise<P.ListSessionsResult> {
    return this.req(P.Methods.listSessions, p);
  }
  open(p: P.OpenParams): Promise<P.OpenResult> {
    return this.req(P.Methods.open, p);
  }
  close(p: P.OpenParams): Promise<P.CloseResult> {
    return this.req(P.Methods.close, p);
  }
  rows(p: P.RowsParams): Promise<P.RowsResult> {
    return this.req(P.Methods.rows, p);
  }
  tree(p: P.TreeParams): Promise<P.TreeResult> {
    return this.req(P.Methods.tree, p);
  }
  entry(p: P.EntryParams, token?: CancellationToken): Promise<P.EntryResult> {
    return this.req(P.Methods.entry, p, token);
  }
  context(p: P.ContextParams): Promise<P.ContextResult> {
    return this.req(P.Methods.context, p);
  }
  navigate(p: P.NavigateParams, token?: CancellationToken): Promise<P.NavigateResult> {
    return this.req(P.Methods.navigate, p, token);
  }
  branch(p: P.BranchParams): Promise<P.BranchResult> {
    return this.req(P.Methods.branch, p);
  }
  setLabel(p: P.SetLabelParams): Promise<P.MutationResult> {
    return this.req(P.Methods.setLabel, p);
  }
  append(p: P.AppendParams): Promise<P.MutationResult> {
    return this.req(P.Methods.append, p);
  }
  setName(p: P.SetNameParams): Promise<P.NameResult> {
    return this.req(P.Methods.setName, p);
  }
  transcript(p: P.TranscriptParams): Promise<P.TranscriptResult> {
    return this.req(P.Methods.transcript, p);
  }
  prompt(p: P.PromptParams): Promise<P.PromptResult> {
    return this.req(P.Methods.prompt, p);
  }
  abort(p: P.AbortParams): Promise<P.AbortResult> {
    return this.req(P.Methods.abort, p);
  }
  agent(p: P.AgentParams): Promise<P.AgentStatus> {
    return this.req(P.Methods.agent, p);
  }
  stopAgent(p: P.AgentParams): Promise<P.AgentStatus> {
    return this.req(P.Methods.stopAgent, p);
  }
  installBridge(p: P.InstallBridgeParams): Promise<P.InstallBridgeResult> {
    return this.req(P.Methods.installBridge, p);
  }

  onDidChange(h: (p: P.DidChangeParams) => void): vscode.Disposable {
    return this.notifications.on<P.DidChangeParams>(P.Methods.didChange, h);
  }
  onDidNavigate(h: (p: P.DidNavigateParams) => void): vscode.Disposable {
    return this.notifications.on<P.DidNavigateParams>(P.Methods.didNavigate, h);
  }
  onDidBranch(h: (p: P.DidBranchParams) => void): vscode.Disposable {
    return this.notifications.on<P.DidBranchParams>(P.Methods.didBranch, h);
  }
  onDidRecordRewindPoint(h: (p: P.DidRecordRewindPointParams) => void): vscode.Disposable {
    return this.notifications.on<P.DidRecordRewindPointParams>(P.Methods.didRecordRewindPoint, h);
  }
  onAgentEvent(h: (p: P.AgentEventParams) => void): vscode.Disposable {
    return this.notifications.on<P.AgentEventParams>(P.Methods.agentEvent, h);
  }
  onAgentDialog(h: (p: P.AgentDialogParams, token: CancellationToken) => Promise<P.AgentDialogResult>): vscode.Disposable {
    return this.client.onRequest(P.Methods.agentDialog, h);
  }
  onBeforeTree(h: (p: P.BeforeTreeParams, token: CancellationToken) => Promise<P.BeforeTreeResult>): vscode.Disposable {
    return this.client.onRequest(P.Methods.beforeTree, h);
  }
  onBeforeBranch(h: (p: P.BeforeBranchParams) => P.BeforeBranchResult): vscode.Disposable {
    return this.client.onRequest(P.Methods.beforeBranch, h);
  }

  async stop(): Promise<void> {
    await this.client.stop();
  }
}
