/**
 * Pure client-side helpers: presentation only (filter keys as the agents bind them, highlight
 * offsets, view descriptions, the server binary's location, the agent CLI command line, chat
 * message text). No `vscode` import so the unit tests run under plain node, and no tree logic:
 * rows, labels, the active path, matches and navigation decisions all come from the server.
 */
import type { Dialect, FilterMode, Row, SessionInfo } from './protocol';

/** The agents' cycle order (pi/omp tree-selector: default → no-tools → user-only → labeled-only → all). */
export const FILTER_ORDER: readonly FilterMode[] = ['default', 'noTools', 'userOnly', 'labeledOnly', 'all'];

/** Ctrl+O (+1) / Shift+Ctrl+O (-1). */
export function cycleFilter(mode: FilterMode, step: 1 | -1): FilterMode {
  const i = FILTER_ORDER.indexOf(mode);
  const n = FILTER_ORDER.length;
  return FILTER_ORDER[(((i < 0 ? 0 : i) + step) % n + n) % n] ?? 'default';
}

/** Alt+D sets default; Alt+T/U/L/A toggle their mode against default, as the agents do. */
export function jumpFilter(mode: FilterMode, target: FilterMode): FilterMode {
  if (target === 'default') return 'default';
  return mode === target ? 'default' : target;
}

/** The short names the agents print in the tree's status line. */
export function filterName(mode: FilterMode): string {
  switch (mode) {
    case 'noTools':
      return 'no-tools';
    case 'userOnly':
      return 'user';
    case 'labeledOnly':
      return 'labeled';
    case 'all':
      return 'all';
    default:
      return 'default';
  }
}

export function isFilterMode(s: unknown): s is FilterMode {
  return typeof s === 'string' && (FILTER_ORDER as readonly string[]).includes(s);
}

/** The Tree view's description: filter, search, follow state. */
export function treeDescription(mode: FilterMode, search: string, follow: boolean, total?: number, shown?: number): string {
  const parts: string[] = [];
  if (mode !== 'default') parts.push(`[${filterName(mode)}]`);
  if (search) parts.push(`search: "${visibleText(search)}"`);
  if (typeof total === 'number') parts.push(shown !== undefined && shown < total ? `${shown}/${total} rows` : `${total} rows`);
  if (!follow) parts.push('follow off');
  return parts.join(' · ');
}

/** UTF-16 offset of the `chars`-th Unicode scalar value of `s` (clamped to its end). */
export function utf16Offset(s: string, chars: number): number {
  let units = 0;
  let seen = 0;
  for (const ch of s) {
    if (seen >= chars) break;
    units += ch.length;
    seen++;
  }
  return units;
}

/**
 * What a row shows before its text: the active-path dot and `[label] `, drawn like the agent's
 * lines (`│  ├─ • [dest] user: Paris`). Servers that put the label into `text` get no second one.
 */
function rowLead(row: Row): string {
  // A folded row without a connector (a root, a chain) shows `⊞` before its text, as pi draws it.
  const fold = row.folded && !row.prefix.includes('⊞') ? '⊞ ' : '';
  const dot = row.onActivePath ? '• ' : '';
  const tag = row.label && !row.text.startsWith(`[${row.label}]`) ? `[${row.label}] ` : '';
  return fold + dot + tag;
}

/**
 * Text as the rows draw it (the server's `drawable`): every C0 control character and DEL is its
 * visible Control Pictures symbol (`␉` for a tab, `␇` for a bell), one UTF-16 unit for one, so
 * highlight offsets stay valid and nothing is drawn raw.
 */
export function visibleText(s: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this replaces
  return s.replace(/[\u0000-\u001f\u007f]/g, (c) => (c === '\u007f' ? '\u2421' : String.fromCharCode(0x2400 + c.charCodeAt(0))));
}

/** The row without connectors or dot (`[label] text`), for quick picks. */
export function rowPlain(row: Row): string {
  return visibleText((row.label && !row.text.startsWith(`[${row.label}]`) ? `[${row.label}] ` : '') + row.text);
}

/** Columns asked of the server: wide, since VS Code cuts long labels itself. */
export const ROW_WIDTH = 240;

/** Connector columns kept on deep rows: a side bar is narrower than a terminal. */
export const MAX_PREFIX = 24;

/** The server's prefix, its left end cut to `…` past `MAX_PREFIX` characters (deep branches). */
export function rowPrefix(row: Row): string {
  const chars = [...row.prefix];
  return chars.length <= MAX_PREFIX ? row.prefix : '…' + chars.slice(chars.length - (MAX_PREFIX - 1)).join('');
}

/** The label a tree item shows: the server's prefix (connectors), the dot and label, and the text. */
export function rowLabel(row: Row): string {
  return rowPrefix(row) + visibleText(rowLead(row) + row.text);
}

/** The codicon that marks the leaf's row (in place of the kind's icon: an icon is never cut). */
export const LEAF_ICON = 'circle-filled';

/**
 * The row that carries the leaf mark: the leaf's own row, else (the leaf hidden by the filter or
 * the search, e.g. a label entry just written) the nearest shown entry above it, the last row on
 * the active path. `undefined` when the leaf is before the first entry or nothing of its path shows.
 */
export function leafMarkRow(rows: readonly Row[], leaf: string | null | undefined): { id: string; hidden: boolean } | undefined {
  if (!leaf) return undefined;
  let last: Row | undefined;
  for (const r of rows) {
    if (r.isLeaf && r.id) return { id: r.id, hidden: false };
    if (r.onActivePath && r.id) last = r;
  }
  return last?.id ? { id: last.id, hidden: true } : undefined;
}

/**
 * The server's match ranges (Unicode scalar values inside `text`) as VS Code label highlights
 * (UTF-16 offsets inside the whole label).
 */
export function rowHighlights(row: Row): [number, number][] {
  const base = rowPrefix(row).length + rowLead(row).length;
  const out: [number, number][] = [];
  for (const m of row.matches ?? []) {
    const start = base + utf16Offset(row.text, m.start);
    const end = base + utf16Offset(row.text, m.end);
    if (end > start) out.push([start, end]);
  }
  return out;
}

/** A codicon id per entry kind (and role for messages). */
export function rowIcon(row: Pick<Row, 'kind' | 'role'>): string {
  if (row.kind === 'message') {
    switch (row.role) {
      case 'user':
        return 'account';
      case 'assistant':
        return 'hubot';
      case 'toolResult':
        return 'tools';
      case 'bashExecution':
        return 'terminal';
      default:
        return 'comment';
    }
  }
  switch (row.kind) {
    case 'branch_summary':
      return 'git-merge';
    case 'compaction':
      return 'fold';
    case 'custom_message':
      return 'note';
    case 'custom':
      return 'extensions';
    case 'label':
      return 'tag';
    case 'model_change':
      return 'server-environment';
    case 'thinking_level_change':
      return 'lightbulb';
    case 'session_info':
      return 'info';
    default:
      return 'circle-small';
  }
}

/** `contextValue` for item menus: `entry`, plus the facts menus filter on. */
export function rowContext(row: Row): string {
  const parts = ['entry', `kind-${row.kind}`];
  if (row.role) parts.push(`role-${row.role}`);
  if (row.label) parts.push('labelled');
  if (row.isLeaf) parts.push('leaf');
  if (row.onActivePath) parts.push('active');
  if (row.folded) parts.push('folded');
  else if (row.foldable) parts.push('foldable');
  return parts.join(' ');
}

/** The id a tree item gets: the entry id, or a positional id for id-less entries. */
export function rowItemId(row: Row, index: number): string {
  return row.id ? `e:${row.id}` : `n:${index}`;
}

/** Where to find `sessiontree`: the setting, else PATH, else the repo's release/debug build. */
export function resolveServerPath(opts: {
  setting: string | undefined;
  pathEnv: string | undefined;
  repoRoots: string[];
  exists: (p: string) => boolean;
  join: (...p: string[]) => string;
  delimiter: string;
}): string | undefined {
  if (opts.setting && opts.setting.trim()) return opts.setting.trim();
  for (const dir of (opts.pathEnv ?? '').split(opts.delimiter)) {
    if (!dir) continue;
    const p = opts.join(dir, 'sessiontree');
    if (opts.exists(p)) return p;
  }
  for (const root of opts.repoRoots) {
    for (const profile of ['release', 'debug']) {
      const p = opts.join(root, 'target', profile, 'sessiontree');
      if (opts.exists(p)) return p;
    }
  }
  return undefined;
}

/** The agent's own CLI resuming a session file: `omp --resume <file>` / `pi --session <file>`. */
export function agentCommand(dialect: Dialect, file: string, override?: string): { command: string; args: string[] } {
  if (dialect === 'pi') return { command: override || 'pi', args: ['--session', file] };
  return { command: override || 'omp', args: ['--resume', file] };
}

/** Quotes a word for a POSIX shell. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The Sessions view's label for a session (control characters drawn visibly). */
export function sessionLabel(s: SessionInfo): string {
  const base = s.path.split(/[\\/]/).pop() ?? s.path;
  return visibleText(s.name || s.firstUserMessage || base);
}

/** What a fork's `parentSession` names: the listed session at that path, else the file's name. */
export function forkSource(s: SessionInfo, all: readonly SessionInfo[]): string | undefined {
  const parent = s.parentSession;
  if (!parent) return undefined;
  const found = all.find((x) => x.path === parent || x.uri === parent);
  return found ? sessionLabel(found) : visibleText(parent.split(/[\\/]/).pop() ?? parent);
}

/** `1,234 entries` (one entry: `1 entry`). */
export function entryCount(n: number): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? 'entry' : 'entries'}`;
}

/**
 * A session's description in the Sessions view and *Open Session…*: live, age, dialect, entries,
 * the session it was forked from, and the first message when the label is the name.
 */
export function sessionDescription(s: SessionInfo, all: readonly SessionInfo[], now: number): string {
  const source = forkSource(s, all);
  return [
    s.liveWriter ? '● live' : '',
    relativeTime(s.modifiedMs, now),
    s.dialect,
    entryCount(s.entryCount),
    source ? `fork of ${source}` : '',
    s.name && s.firstUserMessage ? visibleText(s.firstUserMessage) : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

/** "5m ago"-style age. */
export function relativeTime(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ago`;
  return `${Math.floor(h / 24)}d ago`;
}

/** The session opened by default: the one an agent is writing right now, else the newest. */
export function defaultSession(sessions: SessionInfo[]): SessionInfo | undefined {
  return sessions.find((s) => s.liveWriter) ?? sessions[0];
}

/** One message of the chat view. */
export interface ChatMessage {
  role: string;
  text: string;
}

function blockText(block: unknown): string {
  if (typeof block === 'string') return block;
  if (!block || typeof block !== 'object') return '';
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? b.text : '';
    case 'thinking':
      return '';
    case 'toolCall': {
      const args = b.arguments === undefined ? '' : JSON.stringify(b.arguments);
      return `→ ${String(b.name ?? 'tool')}(${args.length > 200 ? args.slice(0, 200) + '…' : args})`;
    }
    case 'image':
      return '[image]';
    default:
      return typeof b.text === 'string' ? b.text : '';
  }
}

/** How the chat view names a message's role. */
function roleName(role: string, msg: Record<string, unknown>): string {
  switch (role) {
    case 'toolResult':
      return typeof msg.toolName === 'string' ? `tool ${msg.toolName}` : 'tool';
    case 'branchSummary':
      return 'branch summary';
    case 'compactionSummary':
      return 'compaction summary';
    case 'bashExecution':
      return 'bash';
    case 'custom':
      return typeof msg.customType === 'string' ? msg.customType : 'custom';
    default:
      return role;
  }
}

/**
 * The chat view's messages from `sessionTree/context`'s `messages` (the agent's
 * `buildSessionContext` output): role and readable text; thinking is left out.
 */
export function chatMessages(messages: unknown[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as Record<string, unknown>;
    const role = typeof msg.role === 'string' ? msg.role : 'message';
    let text: string;
    if (typeof msg.content === 'string') text = msg.content;
    else if (Array.isArray(msg.content)) text = msg.content.map(blockText).filter(Boolean).join('\n');
    else if (typeof msg.summary === 'string') text = msg.summary;
    else if (typeof msg.command === 'string') text = `$ ${msg.command}\n${typeof msg.output === 'string' ? msg.output : ''}`;
    else text = '';
    if (role === 'toolResult' && text.length > 600) text = text.slice(0, 600) + '…';
    out.push({ role: roleName(role, msg), text });
  }
  return out;
}

/** One abandoned entry as conversation text (messages and earlier summaries; bookkeeping left out). */
export function entryText(entry: unknown): string {
  if (!entry || typeof entry !== 'object') return '';
  const e = entry as Record<string, unknown>;
  if (e.type === 'message' && e.message) {
    const [m] = chatMessages([e.message]);
    return m && m.text ? `${m.role}: ${m.text}` : '';
  }
  if ((e.type === 'branch_summary' || e.type === 'compaction') && typeof e.summary === 'string') return `summary: ${e.summary}`;
  if (e.type === 'custom_message' && typeof e.content === 'string') return `${String(e.customType ?? 'custom')}: ${e.content}`;
  return '';
}

/** Drops a repeat of the same key within `ms` (a click and Enter can both fire for one choice). */
export class Debounce {
  private last: { key: string; at: number } | undefined;
  constructor(private readonly ms: number, private readonly now: () => number = Date.now) {}
  accept(key: string): boolean {
    const t = this.now();
    if (this.last && this.last.key === key && t - this.last.at < this.ms) return false;
    this.last = { key, at: t };
    return true;
  }
}
