/**
 * The sessiontree protocol as the extension sees it: every `sessionTree/…` method name and the wire
 * shapes (camelCase, enums as strings) it uses, mirrored from the Rust crate `sessiontree-protocol`
 * (`protocol-ext/src`). This is the ONLY file that writes a method name: each appears exactly once,
 * as a `'sessionTree/…'` string literal in `Methods` (a Rust test and `test/unit/protocol.test.ts`
 * check them, and every field of the shapes, against the crate's catalog,
 * `protocol-ext/generated/protocol.json`). No behaviour lives here.
 */

// ---------------------------------------------------------------- method names

export const Methods = {
  listSessions: 'sessionTree/listSessions',
  open: 'sessionTree/open',
  close: 'sessionTree/close',
  rows: 'sessionTree/rows',
  tree: 'sessionTree/tree',
  entry: 'sessionTree/entry',
  context: 'sessionTree/context',
  navigate: 'sessionTree/navigate',
  branch: 'sessionTree/branch',
  setLabel: 'sessionTree/setLabel',
  append: 'sessionTree/append',
  setName: 'sessionTree/setName',
  nameFromPlanTitle: 'sessionTree/nameFromPlanTitle',
  transcript: 'sessionTree/transcript',
  prompt: 'sessionTree/prompt',
  abort: 'sessionTree/abort',
  agent: 'sessionTree/agent',
  stopAgent: 'sessionTree/stopAgent',
  installBridge: 'sessionTree/installBridge',
  // rewind (code with the conversation)
  rewindPoints: 'sessionTree/rewindPoints',
  rewindCompare: 'sessionTree/rewindCompare',
  rewindFile: 'sessionTree/rewindFile',
  rewindRestore: 'sessionTree/rewindRestore',
  rewindUndo: 'sessionTree/rewindUndo',
  didRecordRewindPoint: 'sessionTree/didRecordRewindPoint',
  // server → client notifications
  didChange: 'sessionTree/didChange',
  didNavigate: 'sessionTree/didNavigate',
  didBranch: 'sessionTree/didBranch',
  agentEvent: 'sessionTree/agentEvent',
  // server → client requests (hooks, the agent's dialogs)
  beforeTree: 'sessionTree/beforeTree',
  beforeBranch: 'sessionTree/beforeBranch',
  agentDialog: 'sessionTree/agentDialog',
} as const;

/** Every method name, for tests. */
export const ALL_METHODS: readonly string[] = Object.values(Methods);

/** The custom protocol's version this client speaks (`experimental.sessionTree.version`). */
export const PROTOCOL_VERSION = 1;

/** The key under `experimental` in both capability objects. */
export const EXPERIMENTAL_KEY = 'sessionTree';

/** `workspace/executeCommand` commands the server's code lenses and code actions use. */
export const ServerCommands = {
  navigate: 'sessionTree.navigate',
  branch: 'sessionTree.branch',
  label: 'sessionTree.label',
} as const;

// ---------------------------------------------------------------- shared types

export type Dialect = 'omp' | 'pi';

/** The `/tree` filter modes of the agents. */
export type FilterMode = 'default' | 'noTools' | 'userOnly' | 'labeledOnly' | 'all';

/** A half-open range of characters (Unicode scalar values, not UTF-16 units) inside `Row.text`. */
export interface CharRange {
  start: number;
  end: number;
}

export interface Row {
  id: string | null;
  kind: string;
  role?: string | null;
  /** Indentation level as the agent draws it. */
  depth?: number;
  /** Indentation and connectors (`├─ `, `│  `, …) as drawn; one wider than the `width` asked for keeps its right end, led by `…`. */
  prefix: string;
  /** The text after the prefix and the label (role prefix, content preview). */
  text: string;
  label?: string | null;
  onActivePath?: boolean;
  isLeaf?: boolean;
  hasChildren?: boolean;
  /** The row can be folded (pi draws `⊟`; omp, folded by the same rule, draws no marker). */
  foldable?: boolean;
  /** The row is folded (named in the request's `folded`; pi draws `⊞`), its descendants hidden. */
  folded?: boolean;
  selected?: boolean;
  matches?: CharRange[];
}

export interface TreeNode {
  id: string | null;
  parentId?: string | null;
  depth: number;
  kind: string;
  role?: string | null;
  preview: string;
  label?: string | null;
  timestamp?: string | null;
  line: number;
  childCount: number;
  onActivePath?: boolean;
  isLeaf?: boolean;
}

export interface SessionDiagnostic {
  kind: string;
  line?: number | null;
  message: string;
  severity: string;
}

export interface MutationResult {
  revision: number;
  leaf?: string | null;
  entryId?: string | null;
}

export interface SessionInfo {
  uri: string;
  path: string;
  agent?: Dialect | null;
  dialect: Dialect;
  sessionId: string;
  cwd: string;
  /** The header's `parentSession`: the file this session was forked from. */
  parentSession?: string | null;
  name?: string | null;
  firstUserMessage?: string | null;
  entryCount: number;
  modified: string;
  modifiedMs: number;
  liveWriter?: boolean;
}

export interface SuppliedSummary {
  summary: string;
  details?: unknown;
}

// ---------------------------------------------------------------- capabilities

/** The server's `capabilities.experimental.sessionTree`. */
export interface ServerExperimental {
  version: number;
  features: string[];
}

/** The client's `capabilities.experimental.sessionTree`. */
export interface ClientExperimental {
  hooks?: boolean;
  agentDialogs?: boolean;
}

/** `initializationOptions`. */
export interface InitializationOptions {
  extraRoots?: string[];
  liveWriterSeconds?: number | null;
  ompAgentDir?: string | null;
  piAgentDir?: string | null;
  home?: string | null;
  /** `true`/`false` or `{enabled, provider, openai, command, reserveTokens}` (docs/summaries.md). */
  branchSummary?: unknown;
  /** The live agent (docs/agents.md). */
  agent?: AgentSettings;
  /** Session stores (omp's Redis storage, docs/redis.md); from the user settings only. */
  stores?: StoreSettings[];
}

/** One entry of `initializationOptions.stores`. */
export interface StoreSettings {
  url: string;
  user?: string;
  passwordEnv?: string;
  password?: string;
  listAll?: boolean;
  /** For a `rediss://` store whose certificate a private CA signed: that CA's certificate (PEM). */
  caFile?: string;
}

/** `initializationOptions.agent`. */
export interface AgentSettings {
  disabled?: boolean;
  piPath?: string | null;
  ompPath?: string | null;
  piArgs?: string[];
  ompArgs?: string[];
  idleSeconds?: number | null;
  ownSummaries?: boolean;
}

// ---------------------------------------------------------------- requests

export interface ListSessionsParams {
  folders?: string[];
}
export interface ListSessionsResult {
  sessions: SessionInfo[];
  /** Configured stores that could not be listed. */
  unavailable?: { store: string; message: string }[];
}

export interface OpenParams {
  uri: string;
}
export interface OpenResult {
  uri: string;
  sessionId: string;
  dialect: Dialect;
  name?: string | null;
  cwd: string;
  leaf?: string | null;
  revision: number;
  entryCount: number;
  diagnostics: SessionDiagnostic[];
}
export interface CloseResult {
  closed?: boolean;
}

export interface RowsParams {
  uri: string;
  filter?: FilterMode;
  search?: string;
  selection?: string | null;
  width?: number;
  height?: number;
  /** Folded entries (pi's `/tree` folding; omp sessions fold by the same rule): their descendants are hidden. */
  folded?: string[];
  /** Move the selection along the branches first, as pi's fold keys do on a row they do not fold. */
  segment?: SegmentMove;
}
/** `up`: to the first row of the branch segment (or the one above); `down`: to the next branch point's first child. */
export type SegmentMove = 'up' | 'down';
export interface RowsResult {
  revision: number;
  leaf?: string | null;
  rows: Row[];
  lines: string[];
  selection?: string | null;
  windowStart: number;
  totalRows: number;
}

export interface TreeParams {
  uri: string;
  offset?: number;
  limit?: number;
}
export interface TreeResult {
  revision: number;
  leaf?: string | null;
  total: number;
  offset: number;
  nodes: TreeNode[];
}

export interface EntryParams {
  uri: string;
  id: string;
}
export interface EntryResult {
  revision: number;
  entry: unknown;
  markdown: string;
  label?: string | null;
  line: number;
  children: string[];
}

export interface ContextParams {
  uri: string;
  leaf?: string | null;
  /** Default true; false leaves `text` out (about half of the answer). */
  withText?: boolean;
}
export interface ContextResult {
  revision: number;
  leaf?: string | null;
  state: unknown;
  messages: unknown[];
  /** Absent when the request's `withText` is false. */
  text?: string;
}

export type SummarizeChoice = 'none' | 'summarize' | 'custom';
export interface NavigateParams {
  uri: string;
  targetId: string;
  summarize?: SummarizeChoice;
  customInstructions?: string | null;
  /** pi only: a label to attach (to the summary entry, or to the target without one). */
  label?: string | null;
  baseRevision?: number | null;
  force?: boolean;
}
export type NavigateDecision = 'stay' | 'target' | 'parent' | 'root' | 'reopenAsk';
export interface NavigateResult {
  revision: number;
  decision: NavigateDecision;
  oldLeaf?: string | null;
  newLeaf?: string | null;
  editorText?: string | null;
  alreadyAtThisPoint?: boolean;
  cancelled?: boolean;
  summaryEntryId?: string | null;
  /** A summary was asked for but nothing was abandoned, so none was written. */
  summarySkipped?: boolean;
  /** `reopenAsk`: the `ask` tool call whose question is asked again. */
  toolCallId?: string | null;
}

export interface BranchParams {
  uri: string;
  entryId: string;
  baseRevision?: number | null;
}
export interface BranchResult {
  newUri?: string | null;
  newPath?: string | null;
  sessionId?: string | null;
  written?: boolean;
  editorText: string;
  cancelled?: boolean;
  revision: number;
}

export interface SetLabelParams {
  uri: string;
  targetId: string;
  label?: string | null;
  baseRevision?: number | null;
  force?: boolean;
}

export type AppendKind = 'user' | 'custom';
export interface AppendParams {
  uri: string;
  kind?: AppendKind;
  text: string;
  customType?: string | null;
  display?: boolean;
  baseRevision?: number | null;
  force?: boolean;
}

export interface SetNameParams {
  uri: string;
  name: string;
  baseRevision?: number | null;
  force?: boolean;
}
export interface NameFromPlanTitleParams {
  uri: string;
  planTitle: string;
  baseRevision?: number | null;
  force?: boolean;
}
export interface NameResult {
  revision: number;
  leaf?: string | null;
  entryId?: string | null;
  name?: string | null;
  applied?: boolean;
}

// ---------------------------------------------------------------- notifications

export type ChangeReason = 'append' | 'label' | 'name' | 'navigate' | 'follow' | 'reload';
export interface DidChangeParams {
  uri: string;
  revision: number;
  leaf?: string | null;
  reason: ChangeReason;
  newEntryIds?: string[];
}
export interface DidNavigateParams {
  uri: string;
  revision: number;
  newLeaf?: string | null;
  oldLeaf?: string | null;
  summaryEntryId?: string | null;
  fromClient?: boolean;
}
export interface DidBranchParams {
  uri: string;
  entryId: string;
  newUri: string;
  written?: boolean;
}

// ---------------------------------------------------------------- hooks (server → client requests)

export interface BeforeTreeParams {
  uri: string;
  targetId: string;
  oldLeaf?: string | null;
  commonAncestor?: string | null;
  entriesToSummarize: string[];
  /** The abandoned entries themselves (as written), in the same order. */
  entries?: unknown[];
  userWantsSummary?: boolean;
  customInstructions?: string | null;
}
export interface BeforeTreeResult {
  cancel?: boolean;
  summary?: SuppliedSummary | null;
}
export interface BeforeBranchParams {
  uri: string;
  entryId: string;
}
export interface BeforeBranchResult {
  cancel?: boolean;
}

// ---------------------------------------------------------------- the live agent

export interface TranscriptParams {
  uri: string;
  leaf?: string | null;
  limit?: number | null;
}
export interface TranscriptResult {
  revision: number;
  leaf: string | null;
  items: TranscriptItem[];
  omitted: number;
}
/** One message of the conversation, rendered by the server. */
export interface TranscriptItem {
  entryId: string | null;
  role: string;
  detail: string | null;
  blocks: DisplayBlock[];
}
/** One piece of a message (`kind` says which; the other fields belong to that kind). */
export type DisplayBlock =
  | { kind: 'text'; text: string }
  | { kind: 'markdown'; text: string }
  | { kind: 'thinking'; text: string }
  | { kind: 'toolCall'; id: string; name: string; summary: string; arguments: string }
  | { kind: 'toolResult'; id: string; name: string; summary: string; text: string; isError?: boolean }
  | { kind: 'image'; mimeType: string }
  | { kind: 'command'; command: string; output: string; exitCode?: number | null }
  | { kind: 'notice'; text: string; isError?: boolean };

export type AgentKind = 'omp' | 'pi';
export type AgentSource = 'spawned' | 'terminal';
export type AgentState = 'none' | 'starting' | 'idle' | 'running' | 'exited' | 'unavailable';
export interface AgentStatus {
  uri: string;
  agent: AgentKind;
  state: AgentState;
  source: AgentSource | null;
  pid: number | null;
  model: string | null;
  armed: boolean;
  executable: string | null;
  message: string | null;
  stderrTail: string[];
}
export interface AgentParams {
  uri: string;
  start?: boolean;
}
export type DeliverAs = 'steer' | 'followUp';
export interface PromptParams {
  uri: string;
  text: string;
  deliverAs?: DeliverAs | null;
  baseRevision?: number | null;
}
export interface PromptResult {
  revision: number;
  turn: number;
  agent: AgentStatus;
}
export interface AbortParams {
  uri: string;
}
export interface AbortResult {
  aborted: boolean;
}
export type DeltaKind = 'text' | 'thinking';
export type NoticeLevel = 'info' | 'warning' | 'error';
/** What an agent event says (`kind` says which). */
export type AgentEventBody =
  | { kind: 'status'; status: AgentStatus }
  | { kind: 'agentStart' }
  | { kind: 'agentEnd' }
  | { kind: 'messageStart'; message: number; role: string }
  | { kind: 'delta'; message: number; block: number; delta: DeltaKind; text: string }
  | { kind: 'messageEnd'; message: number; item: TranscriptItem }
  | { kind: 'toolStart'; toolCallId: string; name: string }
  | { kind: 'toolUpdate'; toolCallId: string; text: string }
  | { kind: 'toolEnd'; toolCallId: string; name: string; isError?: boolean }
  | { kind: 'leaf'; leaf?: string | null; summaryEntryId?: string | null }
  | { kind: 'notice'; level: NoticeLevel; text: string }
  | { kind: 'error'; message: string }
  | { kind: 'exited'; code?: number | null; stderrTail?: string[] };
export interface AgentEventParams {
  uri: string;
  seq: number;
  turn: number | null;
  event: AgentEventBody;
}
export type DialogKind = 'select' | 'confirm' | 'input' | 'editor';
export interface AgentDialogParams {
  uri: string;
  dialog: DialogKind;
  title: string;
  message: string | null;
  options: string[];
  placeholder: string | null;
  prefill: string | null;
  timeoutMs: number | null;
}
export interface AgentDialogResult {
  value?: string | null;
  confirmed?: boolean;
  cancelled?: boolean;
}
export interface InstallBridgeParams {
  agent: AgentKind;
}
export interface InstallBridgeResult {
  path: string;
  written: boolean;
}

// ---------------------------------------------------------------- rewind

export type RewindMoment = 'before' | 'after';
export type RewindSource = 'sessiontree' | 'piRewindHook';
export interface RewindPoint {
  entryId: string;
  moment: RewindMoment;
  exact: boolean;
  source: RewindSource;
  by: string;
  takenAt?: string | null;
  snapshot: string;
  pruned?: boolean;
}
export interface UsedRewindPoint {
  asked: string;
  point: RewindPoint;
}
export interface RewindPointsParams {
  uri: string;
}
export interface RewindPointsResult {
  available: boolean;
  workspace?: string | null;
  reason?: string | null;
  points: RewindPoint[];
}
export interface RewindChangedFile {
  path: string;
  status: 'added' | 'modified' | 'deleted';
}
export interface RewindCompareParams {
  uri: string;
  entryId: string;
  toEntryId?: string | null;
}
export interface RewindCompareResult {
  workspace: string;
  point: UsedRewindPoint;
  to?: UsedRewindPoint | null;
  files: RewindChangedFile[];
}
export interface RewindFileParams {
  uri: string;
  entryId: string;
  path: string;
}
export interface RewindFileResult {
  point: UsedRewindPoint;
  exists: boolean;
  mode?: string | null;
  text?: string | null;
  binary?: boolean;
}
export interface RewindRestoredFile {
  path: string;
  action: 'added' | 'changed' | 'deleted';
}
export interface RewindSkippedFile {
  path: string;
  reason: string;
}
export interface RewindRestoreParams {
  uri: string;
  entryId: string;
  dryRun?: boolean;
}
export interface RewindUndoParams {
  uri: string;
  dryRun?: boolean;
}
export interface DidRecordRewindPointParams {
  uri: string;
  point: RewindPoint;
}
export interface RewindRestoreResult {
  workspace: string;
  point?: UsedRewindPoint | null;
  dryRun?: boolean;
  undoSnapshot?: string | null;
  files: RewindRestoredFile[];
  skipped: RewindSkippedFile[];
}

// ---------------------------------------------------------------- errors

/** `error.data.kind` of a protocol error. */
export type ErrorKind =
  | 'entryNotFound'
  | 'sessionNotFound'
  | 'fileNotFound'
  | 'invalidHeader'
  | 'needsMigration'
  | 'staleRevision'
  | 'invalidParams'
  | 'notUserMessage'
  | 'writerBusy'
  | 'fileReplaced'
  | 'noModel'
  | 'provider'
  | 'unsupported'
  | 'io'
  | 'agentNotInstalled'
  | 'agentFailed'
  | 'agentBusy'
  | 'agentRunning'
  | 'agentNotArmed'
  | 'notARepository'
  | 'noRewindPoint'
  | 'snapshotPruned'
  | 'nothingToUndo'
  | 'restoreRolledBack'
  | 'restoreBroken'
  | 'gitFailed'
  | 'internal'
  | 'parseError'
  | 'invalidRequest';

export interface ErrorData {
  kind: ErrorKind;
  revision?: number;
}
