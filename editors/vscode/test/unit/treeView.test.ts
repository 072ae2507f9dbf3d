// The Tree view's fold keys (pi's Ctrl+← / Alt+←, Ctrl+→ / Alt+→) against a fake server that
// windows a long tree: folding and unfolding stay the client's choice (from the row's flags), a
// branch-segment move is the server's (`segment`), and the row the server selects is selected and
// revealed even when it lies far outside the window that was on screen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Api } from '../../src/api';
import type { OpenResult, Row, RowsParams, RowsResult } from '../../src/protocol';
import { SessionController } from '../../src/session';
import { type RowNode, TreeProvider } from '../../src/treeView';
import { treeViews } from './vscode-stub';

const TOTAL = 1000;
const WINDOW = 20;
const id = (i: number) => `e${i}`;

/**
 * A server for a 1000-row tree (rows e0 … e999, the leaf e999) that sends 20 rows around the
 * selection. `foldable` rows can fold; `moves` is where a segment move from a row lands (the
 * real rule is the server's and is tested there; here it is a given answer).
 */
class FakeServer {
  calls: RowsParams[] = [];
  foldable = new Set(['e0', 'e990']);
  moves: Record<'up' | 'down', Record<string, string>> = {
    up: { e999: 'e0', e990: 'e0' },
    down: { e0: 'e999' },
  };
  async open(p: { uri: string }): Promise<OpenResult> {
    return { uri: p.uri, sessionId: 's', dialect: 'pi', cwd: '/w', leaf: id(TOTAL - 1), revision: 1, entryCount: TOTAL, diagnostics: [] };
  }
  async close() {
    return { closed: true };
  }
  async rows(p: RowsParams): Promise<RowsResult> {
    this.calls.push(p);
    let selection = p.selection ?? id(TOTAL - 1);
    if (p.segment) selection = this.moves[p.segment][selection] ?? selection;
    const at = Number(selection.slice(1));
    const windowStart = Math.max(0, Math.min(at - WINDOW / 2, TOTAL - WINDOW));
    const rows: Row[] = [];
    for (let i = windowStart; i < windowStart + WINDOW; i++) {
      const folded = p.folded?.includes(id(i)) ?? false;
      rows.push({ id: id(i), kind: 'message', prefix: '', text: `row ${i}`, foldable: this.foldable.has(id(i)), folded, hasChildren: i < TOTAL - 1 });
    }
    return { revision: 1, leaf: id(TOTAL - 1), rows, lines: [], selection, windowStart, totalRows: TOTAL };
  }
  onDidChange() {
    return { dispose() {} };
  }
}

const log = { appendLine: () => {} } as unknown as import('vscode').OutputChannel;

async function setup() {
  const server = new FakeServer();
  const ctl = new SessionController(server as unknown as Api, log);
  const tree = new TreeProvider(ctl);
  const view = treeViews.at(-1)!;
  await ctl.open('file:///big.jsonl');
  server.calls = [];
  const lastReveal = () => {
    const r = view.reveals.at(-1);
    return r && { id: (r.node as RowNode).row.id, ...r.options };
  };
  return { server, ctl, tree, view, lastReveal };
}

test("Ctrl+← on a row that cannot fold moves by the server's segment move; the row it lands on is selected and revealed, far outside the window on screen", async () => {
  const { server, ctl, tree, lastReveal } = await setup();
  assert.equal(ctl.rows?.windowStart, TOTAL - WINDOW, 'the window is around the leaf');
  assert.equal(tree.nodeFor('e0'), undefined, 'the root is not loaded');
  await tree.foldKey('e999', -1);
  assert.deepEqual(server.calls.map((c) => [c.selection, c.segment, c.folded]), [['e999', 'up', []]]);
  assert.equal(ctl.selectedId, 'e0');
  assert.equal(ctl.rows?.windowStart, 0, 'the window around the row the server selected');
  assert.deepEqual(lastReveal(), { id: 'e0', select: true, focus: true });
  assert.equal(tree.selectedRowId, 'e0');
  // A refresh afterwards keeps the selection there and moves nothing again.
  await ctl.refresh();
  assert.deepEqual([server.calls.at(-1)?.selection, server.calls.at(-1)?.segment], ['e0', undefined]);
});

test('Ctrl+→ on a row that is not folded moves down by the server\'s answer, even from a foldable row', async () => {
  const { server, ctl, tree, lastReveal } = await setup();
  await tree.foldKey('e999', -1);
  await tree.foldKey('e0', 1);
  assert.deepEqual(server.calls.at(-1) && [server.calls.at(-1)?.selection, server.calls.at(-1)?.segment], ['e0', 'down']);
  assert.equal(ctl.selectedId, 'e999');
  assert.equal(ctl.rows?.windowStart, TOTAL - WINDOW);
  assert.deepEqual(lastReveal(), { id: 'e999', select: true, focus: true });
  assert.deepEqual(ctl.folded, [], 'nothing folded');
});

test('the fold keys fold a foldable row and unfold a folded one without moving; Ctrl+← on a folded row moves up', async () => {
  const { server, ctl, tree } = await setup();
  await tree.foldKey('e990', -1);
  assert.deepEqual(server.calls.map((c) => [c.selection, c.segment, c.folded]), [['e990', undefined, ['e990']]]);
  assert.deepEqual(ctl.folded, ['e990']);
  assert.equal(tree.nodeFor('e990')?.row.folded, true);
  await tree.foldKey('e990', 1);
  assert.deepEqual(server.calls.at(-1)?.folded, [], 'unfolded');
  assert.equal(server.calls.at(-1)?.segment, undefined);
  await tree.foldKey('e990', -1);
  await tree.foldKey('e990', -1);
  assert.deepEqual(ctl.folded, ['e990']);
  assert.deepEqual([server.calls.at(-1)?.selection, server.calls.at(-1)?.segment, server.calls.at(-1)?.folded], ['e990', 'up', ['e990']]);
  assert.equal(ctl.selectedId, 'e0');
});

test('a fold key on a row that is not on screen (or no row) asks nothing', async () => {
  const { server, tree } = await setup();
  await tree.foldKey('e3', -1);
  await tree.foldKey(undefined, 1);
  assert.deepEqual(server.calls, []);
});
