/**
 * The panel's state for the session on screen: which file is open, the filter and search the user
 * chose, the entries folded (per session, as pi's `/tree` folds them), the selected entry, and the
 * last rows the server sent. It asks the server for rows after every change and tells the views;
 * it computes nothing about the tree itself.
 */
import * as vscode from 'vscode';
import type { Api } from './api';
import { errorMessage } from './errors';
import { cycleFilter, jumpFilter, ROW_WIDTH } from './logic';
import type { DidChangeParams, FilterMode, OpenResult, RowsResult, SegmentMove } from './protocol';

export interface RowsChange {
  /** Why the rows were fetched again (`segment`: the selection moved by a branch segment). */
  reason: 'open' | 'filter' | 'search' | 'fold' | 'segment' | 'refresh' | DidChangeParams['reason'];
  /** Reveal and select the leaf (follow mode, or after a move). */
  revealLeaf: boolean;
}

/**
 * `height` for `sessionTree/rows`: the agents show about half their terminal height, so twice
 * `sessiontree.maxRows` asks for a window of about that many rows (0 = every row).
 */
function windowHeight(): number {
  const max = vscode.workspace.getConfiguration('sessiontree').get<number>('maxRows', 2000);
  return max && max > 0 ? Math.max(10, Math.floor(max)) * 2 : 0;
}

export class SessionController implements vscode.Disposable {
  uri: string | undefined;
  info: OpenResult | undefined;
  rows: RowsResult | undefined;
  filter: FilterMode = 'default';
  search = '';
  /** The search the rows on screen were asked for (`search` runs ahead of it while typing). */
  rowsSearch = '';
  selectedId: string | undefined;
  /** The row the window is centred on after paging (`undefined` = the selection). */
  anchorId: string | undefined;
  follow: boolean;
  /**
   * The folded entries of each session opened (the server draws them folded, `⊞`, and hides
   * their descendants; omp's rows ignore them). Kept per session, so a fold outlives an append,
   * a move and a visit to another session; cleared by a filter or search change, as pi clears them.
   */
  private readonly folds = new Map<string, Set<string>>();

  private readonly rowsEmitter = new vscode.EventEmitter<RowsChange>();
  /** Rows arrived (after open, a filter/search change, or a server change). */
  readonly onDidChangeRows = this.rowsEmitter.event;
  private readonly sessionEmitter = new vscode.EventEmitter<OpenResult | undefined>();
  /** Another session is on screen. */
  readonly onDidChangeSession = this.sessionEmitter.event;
  private readonly subs: vscode.Disposable[] = [];
  private seq = 0;
  /** The search request in flight while the user types, and whether the text changed since. */
  private typing: Promise<void> | undefined;
  private typingAgain = false;

  constructor(readonly api: Api, private readonly log: vscode.OutputChannel) {
    this.follow = vscode.workspace.getConfiguration('sessiontree').get<boolean>('follow', true);
    this.subs.push(api.onDidChange((p) => this.onServerChange(p)));
  }

  get revision(): number | undefined {
    return this.rows?.revision ?? this.info?.revision;
  }

  get leaf(): string | undefined {
    // `null` in the rows is a real answer (the leaf was reset to before the first entry).
    return this.rows ? (this.rows.leaf ?? undefined) : (this.info?.leaf ?? undefined);
  }

  async open(uri: string): Promise<OpenResult> {
    if (this.uri && this.uri !== uri) {
      const old = this.uri;
      this.api.close({ uri: old }).catch((e) => this.log.appendLine(`close ${old}: ${errorMessage(e)}`));
    }
    const info = await this.api.open({ uri });
    this.uri = info.uri;
    this.info = info;
    this.selectedId = undefined;
    this.rows = undefined;
    this.sessionEmitter.fire(info);
    await this.refresh({ reason: 'open', revealLeaf: true });
    return info;
  }

  /** The folded entries of the session on screen. */
  get folded(): string[] {
    return this.uri ? [...(this.folds.get(this.uri) ?? [])] : [];
  }

  /** Folds (`true`) or unfolds `id` in the session on screen and fetches the rows again. */
  async setFolded(id: string, folded: boolean): Promise<void> {
    const uri = this.uri;
    if (!uri) return;
    const set = this.folds.get(uri) ?? new Set<string>();
    if (folded === set.has(id)) return;
    if (folded) set.add(id);
    else set.delete(id);
    this.folds.set(uri, set);
    // The window stays on the row folded or unfolded.
    this.selectedId = id;
    this.anchorId = undefined;
    await this.refresh({ reason: 'fold', revealLeaf: false });
  }

  /**
   * pi's fold keys on a row they do not fold or unfold: the selection moves from `id` by a branch
   * segment (`up` to the start of its segment, `down` to the next one or the branch's end). The
   * server finds where, over the whole tree in both dialects (`segment`), and sends the window
   * around it. Returns the entry selected now, or `undefined` when a later request superseded
   * this one.
   */
  async moveBySegment(id: string, way: SegmentMove): Promise<string | undefined> {
    this.selectedId = id;
    this.anchorId = undefined;
    return this.refresh({ reason: 'segment', revealLeaf: false }, way);
  }

  /** pi clears its folds when the filter or the search changes. */
  private clearFolds(): void {
    if (this.uri) this.folds.delete(this.uri);
  }

  async setFilter(mode: FilterMode): Promise<void> {
    if (mode !== this.filter) this.clearFolds();
    this.filter = mode;
    await this.refresh({ reason: 'filter', revealLeaf: false });
  }

  cycle(step: 1 | -1): Promise<void> {
    return this.setFilter(cycleFilter(this.filter, step));
  }

  jump(target: FilterMode): Promise<void> {
    return this.setFilter(jumpFilter(this.filter, target));
  }

  async setSearch(search: string): Promise<void> {
    if (search !== this.search) this.clearFolds();
    this.search = search;
    await this.refresh({ reason: 'search', revealLeaf: false });
  }

  /**
   * The search as the user types it: at most one rows request in flight; keys typed meanwhile
   * send only the latest text when it returns. Resolves once the rows of `search` (or of a later
   * text) are on screen.
   */
  typeSearch(search: string): Promise<void> {
    if (search !== this.search) this.clearFolds();
    this.search = search;
    if (this.typing) {
      this.typingAgain = true;
      return this.typing;
    }
    const run = async (): Promise<void> => {
      try {
        do {
          this.typingAgain = false;
          const asked = this.search;
          await this.refresh({ reason: 'search', revealLeaf: false });
          if (this.search !== asked) this.typingAgain = true;
        } while (this.typingAgain);
      } finally {
        this.typing = undefined;
      }
    };
    this.typing = run();
    return this.typing;
  }

  setFollow(on: boolean): void {
    this.follow = on;
    this.rowsEmitter.fire({ reason: 'refresh', revealLeaf: on });
  }

  /**
   * Fetches the rows again; the latest request wins when several overlap. `segment` moves the
   * selection first (see `moveBySegment`). Returns the entry selected after this answer, or
   * `undefined` when a later request superseded it.
   */
  async refresh(change: RowsChange = { reason: 'refresh', revealLeaf: false }, segment?: SegmentMove): Promise<string | undefined> {
    const uri = this.uri;
    if (!uri) return undefined;
    const mine = ++this.seq;
    const search = this.search;
    const rows = await this.api.rows({
      uri,
      filter: this.filter,
      search,
      selection: change.revealLeaf ? null : (this.anchorId ?? this.selectedId ?? null),
      width: ROW_WIDTH,
      height: windowHeight(),
      folded: this.folded,
      ...(segment ? { segment } : {}),
    });
    if (mine !== this.seq || uri !== this.uri) return undefined;
    this.rows = rows;
    this.rowsSearch = search;
    if (change.revealLeaf) {
      this.selectedId = rows.leaf ?? undefined;
      this.anchorId = undefined;
    } else if (segment && rows.selection) {
      this.selectedId = rows.selection;
    }
    this.rowsEmitter.fire(change);
    return this.selectedId;
  }

  /** The user picked a row: the window follows it from now on. */
  select(id: string): void {
    this.selectedId = id;
    this.anchorId = undefined;
  }

  /**
   * Shows the rows before (-1) or after (+1) the window: the server centres the next window on
   * the first or last row on screen. Returns that row's id (to reveal it).
   */
  async page(direction: 1 | -1): Promise<string | undefined> {
    const rows = this.rows?.rows.filter((r) => r.id) ?? [];
    const edge = direction < 0 ? rows[0] : rows[rows.length - 1];
    if (!edge?.id) return undefined;
    this.anchorId = edge.id;
    await this.refresh({ reason: 'refresh', revealLeaf: false });
    return edge.id;
  }

  private onServerChange(p: DidChangeParams): void {
    if (p.uri !== this.uri) return;
    const live = p.reason === 'follow' || p.reason === 'append' || p.reason === 'reload';
    const reveal = (this.follow && live) || p.reason === 'navigate';
    this.refresh({ reason: p.reason, revealLeaf: reveal }).catch((e) =>
      this.log.appendLine(`rows after ${p.reason}: ${errorMessage(e)}`),
    );
  }

  dispose(): void {
    this.subs.forEach((d) => d.dispose());
    this.rowsEmitter.dispose();
    this.sessionEmitter.dispose();
  }
}
