/**
 * The Tree view: the server's rows drawn as a native TreeView, one item per row, in the order and
 * with the connectors the server sent (the agents' `/tree` look). Items have stable ids (the entry
 * id), `getParent` (every row is top-level, so `reveal` always finds it), a `contextValue` for item
 * menus, label highlights from the server's match ranges, and a tooltip fetched lazily from
 * `sessionTree/entry`. Folding is the server's (pi's `⊟`/`⊞` and hidden descendants): the rows are
 * a flat, windowed list drawn with the agent's connectors, so VS Code's own expand/collapse has no
 * children to hide; pi's fold keys and the item menu's Fold/Unfold ask the server instead.
 */
import * as vscode from 'vscode';
import { errorMessage } from './errors';
import { LEAF_ICON, leafMarkRow, rowContext, rowHighlights, rowIcon, rowItemId, rowLabel, treeDescription, visibleText } from './logic';
import type { Row } from './protocol';
import { POINT_MARK, type Rewind } from './rewind';
import type { SessionController } from './session';

export interface RowNode {
  readonly key: string;
  readonly row: Row;
  readonly index: number;
}

/** "N earlier / later rows" at the edge of the server's window; clicking it pages. */
export interface MoreNode {
  readonly key: string;
  readonly more: 1 | -1;
  readonly count: number;
}

export type TreeNode = RowNode | MoreNode;

const isRow = (n: TreeNode): n is RowNode => 'row' in n;

export class TreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private nodes: RowNode[] = [];
  private edges: MoreNode[] = [];
  private shown = '';
  private byKey = new Map<string, RowNode>();
  /** The row carrying the leaf mark (the leaf, or the nearest shown entry above a hidden leaf). */
  private leafMark: { id: string; hidden: boolean } | undefined;
  readonly view: vscode.TreeView<TreeNode>;
  private readonly subs: vscode.Disposable[] = [];
  /** Called after the tree was redrawn (tests record what is on screen). */
  onRendered: (() => void) | undefined;
  /** Called when the selection changes (tests record it). */
  onSelection: ((id: string | undefined) => void) | undefined;
  /** Rewind points: the row marks and the tooltip's line (see `attachRewind`). */
  private rewind: Rewind | undefined;

  constructor(private readonly ctl: SessionController) {
    this.view = vscode.window.createTreeView('sessiontree.tree', { treeDataProvider: this, showCollapseAll: false });
    this.subs.push(
      this.view,
      this.view.onDidChangeSelection((e) => {
        const first = e.selection[0];
        const id = first && isRow(first) ? first.row.id : undefined;
        if (id) this.ctl.select(id);
        this.onSelection?.(id ?? undefined);
      }),
      ctl.onDidChangeRows((change) => this.redraw(change.revealLeaf)),
      ctl.onDidChangeSession(() => this.redraw(true)),
    );
    this.describe();
  }

  /** Marks the rows that have a rewind point, fetched once per revision. */
  attachRewind(rewind: Rewind): void {
    this.rewind = rewind;
    this.subs.push(
      rewind.onDidChangeMarks(() => {
        this.shown = '';
        this.emitter.fire(undefined);
      }),
    );
    if (this.ctl.uri) void rewind.refreshPoints(this.ctl.uri, this.ctl.revision);
  }

  private describe(): void {
    this.view.description = treeDescription(
      this.ctl.filter,
      this.ctl.rowsSearch,
      this.ctl.follow,
      this.ctl.rows?.totalRows,
      this.ctl.rows?.rows.length,
    );
    this.view.message = !this.ctl.uri
      ? 'No session open. Pick one in Sessions.'
      : this.ctl.rows && this.ctl.rows.rows.length === 0
        ? this.ctl.rowsSearch
          ? `Nothing matches "${visibleText(this.ctl.rowsSearch)}".`
          : 'No entries in this filter.'
        : undefined;
  }

  private redraw(revealLeaf: boolean): void {
    const res = this.ctl.rows;
    const rows = res?.rows ?? [];
    this.nodes = rows.map((row, index) => ({ key: rowItemId(row, index), row, index }));
    const before = res?.windowStart ?? 0;
    const after = res ? Math.max(0, res.totalRows - res.windowStart - rows.length) : 0;
    this.edges = [];
    if (before > 0) this.edges.push({ key: 'more:-1', more: -1, count: before });
    if (after > 0) this.edges.push({ key: 'more:1', more: 1, count: after });
    this.byKey = new Map(this.nodes.map((n) => [n.key, n]));
    this.leafMark = res ? leafMarkRow(rows, res.leaf) : undefined;
    this.describe();
    if (this.rewind && this.ctl.uri) void this.rewind.refreshPoints(this.ctl.uri, this.ctl.revision);
    // Redraw only when something on screen changed: a redraw retires the items' commands, so a
    // click landing during one is lost (one navigation fetches the rows twice: its answer and
    // the server's didChange).
    // eslint-disable-next-line @typescript-eslint/no-unused-vars -- `selected` echoes our own selection
    const shown = JSON.stringify([res?.windowStart, res?.totalRows, this.leafMark, rows.map(({ selected, ...rest }) => rest)]);
    if (shown !== this.shown) {
      this.shown = shown;
      this.emitter.fire(undefined);
    }
    const target = revealLeaf ? this.ctl.leaf : this.ctl.selectedId;
    if (target && this.view.visible) {
      const node = this.byKey.get(`e:${target}`);
      if (node) void Promise.resolve(this.view.reveal(node, { select: true, focus: false })).catch(() => undefined);
    }
    this.onRendered?.();
  }

  /** The rows on screen, for tests and the `/tree` quick pick. */
  get current(): readonly RowNode[] {
    return this.nodes;
  }

  /** The entry id of the selected row, if a row (not a pager) is selected. */
  get selectedRowId(): string | undefined {
    const first = this.view.selection[0];
    return first && isRow(first) ? (first.row.id ?? undefined) : undefined;
  }

  nodeFor(id: string): RowNode | undefined {
    return this.byKey.get(`e:${id}`);
  }

  async revealLeaf(focus = false): Promise<void> {
    let node = this.ctl.leaf ? this.nodeFor(this.ctl.leaf) : undefined;
    if (!node) {
      // Paged away from the leaf, or it is filtered out: ask for the window around it.
      await this.ctl.refresh({ reason: 'refresh', revealLeaf: true });
      node = this.ctl.leaf ? this.nodeFor(this.ctl.leaf) : undefined;
    }
    if (node) await this.view.reveal(node, { select: true, focus });
  }

  /** Pages the window and keeps the edge row in sight. */
  async page(direction: 1 | -1): Promise<void> {
    const id = await this.ctl.page(direction);
    const node = id ? this.nodeFor(id) : undefined;
    if (node) await this.view.reveal(node, { select: false, focus: true });
  }

  /**
   * pi's fold keys on the row `id` (the focused row): Ctrl+← / Alt+← (`direction` -1) folds a
   * foldable row, else moves up to the start of its branch segment; Ctrl+→ / Alt+→ (+1) unfolds a
   * folded row, else moves down to the next segment start or the branch end. The move is the
   * server's, over the whole tree (the row it lands on may be far outside the window on screen):
   * its answer brings the window around that row, which is then selected and revealed.
   */
  async foldKey(id: string | undefined, direction: 1 | -1): Promise<void> {
    const node = id ? this.nodeFor(id) : undefined;
    if (!node || !id) return;
    if (direction < 0 && node.row.foldable && !node.row.folded) return this.ctl.setFolded(id, true);
    if (direction > 0 && node.row.folded) return this.ctl.setFolded(id, false);
    const to = await this.ctl.moveBySegment(id, direction < 0 ? 'up' : 'down');
    const target = to ? this.nodeFor(to) : undefined;
    if (target) await this.view.reveal(target, { select: true, focus: true });
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    if (!isRow(node)) {
      const item = new vscode.TreeItem(`⋯ ${node.count.toLocaleString('en-US')} ${node.more < 0 ? 'earlier' : 'later'} rows`);
      item.id = node.key;
      item.iconPath = new vscode.ThemeIcon(node.more < 0 ? 'fold-up' : 'fold-down');
      item.tooltip = 'Show more rows (the server sends a window of `sessiontree.maxRows` rows)';
      item.contextValue = 'more';
      item.command = { command: 'sessiontree.pageWindow', title: 'Show more rows', arguments: [node.more] };
      return item;
    }
    const { row } = node;
    const item = new vscode.TreeItem({ label: rowLabel(row), highlights: rowHighlights(row) });
    item.id = node.key;
    item.contextValue = rowContext(row);
    // The leaf is marked by the icon, which a long row cannot push out of sight (the description
    // can be cut); a leaf the filter hides (a label entry just written) marks the row above it.
    const mark = this.leafMark && row.id === this.leafMark.id ? this.leafMark : undefined;
    const color = mark
      ? new vscode.ThemeColor('charts.green')
      : row.onActivePath
        ? new vscode.ThemeColor('charts.blue')
        : undefined;
    item.iconPath = new vscode.ThemeIcon(mark ? LEAF_ICON : rowIcon(row), color);
    const leaf = mark ? (mark.hidden ? '● leaf below (hidden here)' : '● leaf') : '';
    const point = this.rewind?.hasPoint(this.ctl.uri, row.id) ? POINT_MARK : '';
    item.description = [leaf, point].filter(Boolean).join(' ') || undefined;
    item.accessibilityInformation = {
      label: `${row.isLeaf ? 'leaf, ' : row.onActivePath ? 'active path, ' : ''}${row.text}`,
    };
    if (row.id) item.command = { command: 'sessiontree.navigate', title: 'Navigate here', arguments: [row.id] };
    return item;
  }

  getChildren(node?: TreeNode): TreeNode[] {
    if (node) return [];
    const top = this.edges.filter((e) => e.more < 0);
    const bottom = this.edges.filter((e) => e.more > 0);
    return [...top, ...this.nodes, ...bottom];
  }

  getParent(): undefined {
    // Rows are drawn flat with the server's connectors, as the agents draw `/tree`: every row is a root.
    return undefined;
  }

  async resolveTreeItem(item: vscode.TreeItem, node: TreeNode, token: vscode.CancellationToken): Promise<vscode.TreeItem> {
    const uri = this.ctl.uri;
    if (!uri || !isRow(node) || !node.row.id) return item;
    try {
      const entry = await this.ctl.api.entry({ uri, id: node.row.id }, token);
      const md = new vscode.MarkdownString(entry.markdown);
      md.appendMarkdown(`\n\n---\nline ${entry.line}${entry.label ? ` · label \`${entry.label}\`` : ''}`);
      const files = this.rewind ? await this.rewind.hoverLine(uri, node.row.id) : undefined;
      if (files) md.appendMarkdown(`\n\n${files}`);
      item.tooltip = md;
    } catch (e) {
      item.tooltip = errorMessage(e);
    }
    return item;
  }

  dispose(): void {
    this.subs.forEach((d) => d.dispose());
    this.emitter.dispose();
  }
}
