// The session controller against a fake server: which rows it asks for, which answer wins, and
// when it reveals the leaf (follow) or keeps the selection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Api } from '../../src/api';
import type { DidChangeParams, OpenResult, RowsParams, RowsResult } from '../../src/protocol';
import { SessionController, type RowsChange } from '../../src/session';
import { settings } from './vscode-stub';

class FakeApi {
  calls: { method: string; params: unknown }[] = [];
  leaf = 'L1';
  revision = 0;
  delays: number[] = [];
  window: string[] = ['W1', 'W2', 'W3'];
  private changeHandlers: ((p: DidChangeParams) => void)[] = [];
  async open(p: { uri: string }): Promise<OpenResult> {
    this.calls.push({ method: 'open', params: p });
    return { uri: p.uri, sessionId: 's', dialect: 'omp', cwd: '/w', leaf: this.leaf, revision: this.revision, entryCount: 3, diagnostics: [] };
  }
  async close(p: { uri: string }) {
    this.calls.push({ method: 'close', params: p });
    return { closed: true };
  }
  async rows(p: RowsParams): Promise<RowsResult> {
    this.calls.push({ method: 'rows', params: p });
    const delay = this.delays.shift() ?? 0;
    const leaf = this.leaf;
    const revision = this.revision;
    if (delay) await new Promise((r) => setTimeout(r, delay));
    const rows = this.window.map((id) => ({ id, kind: 'message', prefix: '', text: id }));
    return { revision, leaf, rows, lines: [`${p.filter}|${p.search}`], selection: p.selection ?? leaf, windowStart: 10, totalRows: 30 };
  }
  onDidChange(h: (p: DidChangeParams) => void) {
    this.changeHandlers.push(h);
    return { dispose() {} };
  }
  change(p: Omit<DidChangeParams, 'revision'>) {
    this.revision++;
    this.changeHandlers.forEach((h) => h({ ...p, revision: this.revision }));
  }
}

const log = { appendLine: () => {} } as unknown as import('vscode').OutputChannel;

function setup() {
  const api = new FakeApi();
  const ctl = new SessionController(api as unknown as Api, log);
  const changes: RowsChange[] = [];
  ctl.onDidChangeRows((c) => changes.push(c));
  /** The next rows change (the refresh a server change starts ends with one). */
  const nextRows = () =>
    new Promise<RowsChange>((resolve) => {
      const sub = ctl.onDidChangeRows((c) => {
        sub.dispose();
        resolve(c);
      });
    });
  return { api, ctl, changes, nextRows };
}

test('open asks for the rows at the leaf and reveals it; opening another closes the first', async () => {
  const { api, ctl, changes } = setup();
  await ctl.open('file:///a.jsonl');
  assert.deepEqual(api.calls.map((c) => c.method), ['open', 'rows']);
  assert.equal((api.calls[1].params as RowsParams).selection, null);
  assert.deepEqual(changes, [{ reason: 'open', revealLeaf: true }]);
  assert.equal(ctl.selectedId, 'L1');
  await ctl.open('file:///b.jsonl');
  assert.ok(api.calls.some((c) => c.method === 'close' && (c.params as { uri: string }).uri === 'file:///a.jsonl'));
  assert.equal(ctl.uri, 'file:///b.jsonl');
});

test('filters and search go to the server with the selection kept', async () => {
  const { api, ctl } = setup();
  await ctl.open('file:///a.jsonl');
  ctl.selectedId = 'X';
  await ctl.jump('userOnly');
  await ctl.setSearch('csv crate');
  const last = api.calls.at(-1)?.params as RowsParams;
  assert.deepEqual([last.filter, last.search, last.selection], ['userOnly', 'csv crate', 'X']);
  await ctl.jump('userOnly'); // toggles back, as the agent
  assert.equal(ctl.filter, 'default');
  await ctl.cycle(-1);
  assert.equal(ctl.filter, 'all');
  assert.equal(ctl.rows?.lines[0], 'all|csv crate');
});

test('the latest rows request wins when answers arrive out of order', async () => {
  const { api, ctl } = setup();
  await ctl.open('file:///a.jsonl');
  api.delays = [60, 0];
  const slow = ctl.setFilter('noTools');
  const fast = ctl.setFilter('all');
  await Promise.all([slow, fast]);
  assert.equal(ctl.rows?.lines[0], 'all|');
});

test('an agent append reveals the new leaf with follow on, keeps the selection with follow off', async () => {
  const { api, ctl, changes, nextRows } = setup();
  await ctl.open('file:///a.jsonl');
  ctl.selectedId = 'X';
  api.leaf = 'L2';
  let rows = nextRows();
  api.change({ uri: 'file:///a.jsonl', leaf: 'L2', reason: 'follow', newEntryIds: ['L2'] });
  await rows;
  assert.deepEqual(changes.at(-1), { reason: 'follow', revealLeaf: true });
  assert.equal(ctl.selectedId, 'L2');

  ctl.setFollow(false);
  ctl.selectedId = 'X';
  api.leaf = 'L3';
  rows = nextRows();
  api.change({ uri: 'file:///a.jsonl', leaf: 'L3', reason: 'follow', newEntryIds: ['L3'] });
  await rows;
  assert.deepEqual(changes.at(-1), { reason: 'follow', revealLeaf: false });
  assert.equal(ctl.selectedId, 'X');
  assert.equal((api.calls.at(-1)?.params as RowsParams).selection, 'X');
  assert.equal(ctl.leaf, 'L3');
});

test('changes to other sessions are ignored; a label keeps the selection', async () => {
  const { api, ctl, changes, nextRows } = setup();
  await ctl.open('file:///a.jsonl');
  const n = api.calls.length;
  // A change the controller acts on asks for rows at once (before its first await).
  api.change({ uri: 'file:///other.jsonl', reason: 'follow' });
  assert.equal(api.calls.length, n);
  ctl.selectedId = 'X';
  const rows = nextRows();
  api.change({ uri: 'file:///a.jsonl', reason: 'label' });
  assert.equal(api.calls.length, n + 1);
  await rows;
  assert.deepEqual(changes.at(-1), { reason: 'label', revealLeaf: false });
  assert.equal(ctl.selectedId, 'X');
});

test('follow defaults to the setting', () => {
  settings['sessiontree.follow'] = false;
  const { ctl } = setup();
  assert.equal(ctl.follow, false);
  delete settings['sessiontree.follow'];
});

test('paging centres the next window on the edge row; a pick or the leaf ends it', async () => {
  settings['sessiontree.maxRows'] = 500;
  const { api, ctl } = setup();
  await ctl.open('file:///a.jsonl');
  assert.equal((api.calls.at(-1)?.params as RowsParams).height, 1000);
  assert.equal(await ctl.page(-1), 'W1');
  assert.equal((api.calls.at(-1)?.params as RowsParams).selection, 'W1');
  assert.equal(await ctl.page(1), 'W3');
  assert.equal((api.calls.at(-1)?.params as RowsParams).selection, 'W3');
  ctl.select('W2');
  await ctl.setFilter('all');
  assert.equal((api.calls.at(-1)?.params as RowsParams).selection, 'W2');
  await ctl.page(1);
  await ctl.refresh({ reason: 'follow', revealLeaf: true });
  assert.equal((api.calls.at(-1)?.params as RowsParams).selection, null);
  assert.equal(ctl.anchorId, undefined);
  settings['sessiontree.maxRows'] = 0;
  await ctl.refresh();
  assert.equal((api.calls.at(-1)?.params as RowsParams).height, 0);
  delete settings['sessiontree.maxRows'];
});

test('a reset leaf (null in the rows) is not replaced by the leaf seen at open', async () => {
  const { api, ctl } = setup();
  await ctl.open('file:///a.jsonl');
  assert.equal(ctl.leaf, 'L1');
  (api as unknown as { leaf: string | null }).leaf = null;
  await ctl.refresh({ reason: 'navigate', revealLeaf: true });
  assert.equal(ctl.leaf, undefined);
});

test('typing a search keeps one request in flight and then asks for the latest text only', async () => {
  const { api, ctl } = setup();
  await ctl.open('file:///a.jsonl');
  const before = api.calls.length;
  api.delays = [50, 0, 0];
  const typed = ['s', 'sp', 'spl', 'spli'].map((t) => ctl.typeSearch(t));
  await Promise.all(typed);
  const searches = api.calls.slice(before).map((c) => (c.params as RowsParams).search);
  assert.deepEqual(searches, ['s', 'spli']);
  assert.equal(ctl.rows?.lines[0], 'default|spli');
  await ctl.typeSearch('spl');
  assert.equal(ctl.rows?.lines[0], 'default|spl');
});

test('a branch-segment move sends the row and the way with the fold state; the server\'s selection becomes the selection; a later request supersedes it', async () => {
  const { api, ctl, changes } = setup();
  await ctl.open('file:///a.jsonl');
  await ctl.setFolded('F', true);
  const to = await ctl.moveBySegment('W2', 'down');
  const p = api.calls.at(-1)?.params as RowsParams;
  assert.deepEqual([p.selection, p.segment, p.folded], ['W2', 'down', ['F']]);
  // The fake server answers the selection it was sent.
  assert.equal(to, 'W2');
  assert.equal(ctl.selectedId, 'W2');
  assert.deepEqual(changes.at(-1), { reason: 'segment', revealLeaf: false });
  api.delays = [60, 0];
  const slow = ctl.moveBySegment('W3', 'up');
  const fast = ctl.refresh();
  assert.deepEqual(await Promise.all([slow, fast]), [undefined, 'W3']);
  assert.equal((api.calls.at(-1)?.params as RowsParams).segment, undefined, 'only the move asks for a segment');
});
