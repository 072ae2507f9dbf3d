// Unit tests of the client's presentation logic (no VS Code needed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  agentCommand,
  chatMessages,
  cycleFilter,
  Debounce,
  entryText,
  defaultSession,
  FILTER_ORDER,
  jumpFilter,
  relativeTime,
  resolveServerPath,
  rowContext,
  rowHighlights,
  rowIcon,
  rowItemId,
  rowLabel,
  rowPrefix,
  MAX_PREFIX,
  sessionDescription,
  sessionLabel,
  shellQuote,
  treeDescription,
  utf16Offset,
  visibleText,
  leafMarkRow,
} from '../../src/logic';
import type { Row, SessionInfo } from '../../src/protocol';

const row = (over: Partial<Row> = {}): Row => ({ id: 'c498f61c', kind: 'message', role: 'user', prefix: '│  ├─ ', text: '[dest] user: Paris', ...over });

test('filters cycle in the agents order, both ways', () => {
  assert.deepEqual(FILTER_ORDER, ['default', 'noTools', 'userOnly', 'labeledOnly', 'all']);
  assert.equal(cycleFilter('default', 1), 'noTools');
  assert.equal(cycleFilter('all', 1), 'default');
  assert.equal(cycleFilter('default', -1), 'all');
  assert.equal(cycleFilter('userOnly', -1), 'noTools');
});

test('Alt+D sets default; the other filter keys toggle against default', () => {
  assert.equal(jumpFilter('all', 'default'), 'default');
  assert.equal(jumpFilter('default', 'userOnly'), 'userOnly');
  assert.equal(jumpFilter('userOnly', 'userOnly'), 'default');
  assert.equal(jumpFilter('noTools', 'labeledOnly'), 'labeledOnly');
});

test('view description shows filter, search and follow', () => {
  assert.equal(treeDescription('default', '', true), '');
  assert.equal(treeDescription('userOnly', 'paris', false, 3), '[user] · search: "paris" · 3 rows · follow off');
  assert.equal(treeDescription('default', '', true, 1981, 300), '300/1981 rows');
});

test('highlights: char ranges become UTF-16 offsets after the prefix', () => {
  const r = row({ matches: [{ start: 13, end: 18 }] });
  const label = rowLabel(r);
  const [[s, e]] = rowHighlights(r);
  assert.equal(label.slice(s, e), 'Paris');
});

test('label: prefix, active-path dot, [label], text — as the agent prints the line', () => {
  const r = row({ text: 'user: Paris', label: 'dest', onActivePath: true, matches: [{ start: 6, end: 11 }] });
  assert.equal(rowLabel(r), '│  ├─ • [dest] user: Paris');
  const [[s, e]] = rowHighlights(r);
  assert.equal(rowLabel(r).slice(s, e), 'Paris');
  // A server that already put the label into the text does not get it twice.
  assert.equal(rowLabel(row({ label: 'dest' })), '│  ├─ [dest] user: Paris');
});

test('highlights count astral characters as one char, as the server does', () => {
  const r = row({ prefix: '', text: '😀 user: Paris', matches: [{ start: 8, end: 13 }] });
  const [[s, e]] = rowHighlights(r);
  assert.equal(rowLabel(r).slice(s, e), 'Paris');
  assert.equal(utf16Offset('😀a', 1), 2);
  assert.equal(utf16Offset('ab', 9), 2);
  assert.deepEqual(rowHighlights(row({ matches: [{ start: 3, end: 3 }] })), []);
});

test('icons, context values and ids per row', () => {
  assert.equal(rowIcon({ kind: 'message', role: 'user' }), 'account');
  assert.equal(rowIcon({ kind: 'message', role: 'assistant' }), 'hubot');
  assert.equal(rowIcon({ kind: 'branch_summary' }), 'git-merge');
  assert.equal(rowIcon({ kind: 'something_new' }), 'circle-small');
  assert.equal(rowContext(row({ label: 'x', isLeaf: true, onActivePath: true })), 'entry kind-message role-user labelled leaf active');
  assert.equal(rowItemId(row(), 4), 'e:c498f61c');
  assert.equal(rowItemId(row({ id: null }), 4), 'n:4');
});

test('server path: setting, then PATH, then the repo build (release first)', () => {
  const files = new Set(['/bin2/sessiontree', '/repo/target/debug/sessiontree', '/repo/target/release/sessiontree']);
  const base = { pathEnv: '/bin1:/bin2', repoRoots: ['/repo'], exists: (p: string) => files.has(p), join: (...p: string[]) => p.join('/'), delimiter: ':' };
  assert.equal(resolveServerPath({ ...base, setting: ' /opt/st ' }), '/opt/st');
  assert.equal(resolveServerPath({ ...base, setting: '' }), '/bin2/sessiontree');
  assert.equal(resolveServerPath({ ...base, setting: undefined, pathEnv: '' }), '/repo/target/release/sessiontree');
  files.delete('/repo/target/release/sessiontree');
  assert.equal(resolveServerPath({ ...base, setting: undefined, pathEnv: '' }), '/repo/target/debug/sessiontree');
  assert.equal(resolveServerPath({ ...base, setting: undefined, pathEnv: '', repoRoots: [] }), undefined);
});

test('agent CLI: omp --resume, pi --session, quoted for the shell', () => {
  assert.deepEqual(agentCommand('omp', '/a b/s.jsonl'), { command: 'omp', args: ['--resume', '/a b/s.jsonl'] });
  assert.deepEqual(agentCommand('pi', '/s.jsonl', 'mypi'), { command: 'mypi', args: ['--session', '/s.jsonl'] });
  assert.equal(shellQuote('/a/b.jsonl'), '/a/b.jsonl');
  assert.equal(shellQuote("/it's here"), `'/it'\\''s here'`);
});

const info = (over: Partial<SessionInfo>): SessionInfo => ({
  uri: 'file:///s/a.jsonl', path: '/s/a.jsonl', dialect: 'omp', sessionId: 'x', cwd: '/w', entryCount: 1, modified: '', modifiedMs: 0, ...over,
});

test('sessions: label falls back name → first message → file name; the live one opens first', () => {
  assert.equal(sessionLabel(info({ name: 'Trip' , firstUserMessage: 'hi' })), 'Trip');
  assert.equal(sessionLabel(info({ firstUserMessage: 'hi' })), 'hi');
  assert.equal(sessionLabel(info({})), 'a.jsonl');
  const a = info({ uri: 'a' }), b = info({ uri: 'b', liveWriter: true });
  assert.equal(defaultSession([a, b])?.uri, 'b');
  assert.equal(defaultSession([a])?.uri, 'a');
  assert.equal(defaultSession([]), undefined);
  assert.equal(relativeTime(0, 30_000), '30s ago');
  assert.equal(relativeTime(0, 3 * 3600_000), '3h ago');
});

test('chat messages: text blocks, tool calls, no thinking, long tool output cut', () => {
  const msgs = chatMessages([
    { role: 'user', content: 'Paris' },
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Sure' }, { type: 'toolCall', name: 'read', arguments: { path: 'a' } }] },
    { role: 'toolResult', toolName: 'read', content: [{ type: 'text', text: 'x'.repeat(1000) }] },
    { role: 'branchSummary', summary: 'We looked at hotels' },
    null,
  ]);
  assert.deepEqual(msgs.slice(0, 2), [
    { role: 'user', text: 'Paris' },
    { role: 'assistant', text: 'Sure\n→ read({"path":"a"})' },
  ]);
  assert.equal(msgs[2]?.role, 'tool read');
  assert.equal(msgs[2]?.text.length, 601);
  assert.deepEqual(msgs[3], { role: 'branch summary', text: 'We looked at hotels' });
  assert.equal(msgs.length, 4);
});

test('debounce drops a repeat of the same key only', () => {
  let t = 0;
  const d = new Debounce(400, () => t);
  assert.ok(d.accept('a'));
  t = 100;
  assert.ok(!d.accept('a'));
  assert.ok(d.accept('b'));
  t = 1000;
  assert.ok(d.accept('b'));
});

test('entry text for a language-model summary: messages and summaries, no bookkeeping', () => {
  assert.equal(entryText({ type: 'message', message: { role: 'user', content: 'Paris' } }), 'user: Paris');
  assert.equal(entryText({ type: 'branch_summary', summary: 'Hotels' }), 'summary: Hotels');
  assert.equal(entryText({ type: 'custom_message', customType: 'note', content: 'x' }), 'note: x');
  assert.equal(entryText({ type: 'label', targetId: 'a' }), '');
  assert.equal(entryText(null), '');
});

test('deep rows: the prefix is cut on the left, highlights still land on the match', () => {
  const deep = row({ prefix: '│  '.repeat(20) + '├─ ', text: 'user: Paris', matches: [{ start: 6, end: 11 }] });
  const p = rowPrefix(deep);
  assert.equal([...p].length, MAX_PREFIX);
  assert.ok(p.startsWith('…') && p.endsWith('├─ '));
  const [[s, e]] = rowHighlights(deep);
  assert.equal(rowLabel(deep).slice(s, e), 'Paris');
  assert.equal(rowPrefix(row()), '│  ├─ ');
});

test('control characters are drawn as the rows draw them, one UTF-16 unit for one', () => {
  assert.equal(visibleText('Quoted\tcommas\u0007 in pi'), 'Quoted\u2409commas\u2407 in pi');
  assert.equal(visibleText('a\nb\u0000\u001b\u007f\u0085'), 'a\u240ab\u2400\u241b\u2421\u0085');
  assert.equal(sessionLabel(info({ name: 'x\ty\u0007' })), 'x\u2409y\u2407');
  const r = row({ text: '[title: a\tb\u0007 c]', matches: [{ start: 13, end: 14 }] });
  assert.equal(rowLabel(r), '│  ├─ [title: a\u2409b\u2407 c]');
  const [[start, end]] = rowHighlights(r);
  assert.equal(rowLabel(r).slice(start, end), 'c');
});

test('the leaf mark: the leaf row, else the last active-path row above a hidden leaf', () => {
  const rows: Row[] = [
    row({ id: 'a', onActivePath: true }),
    row({ id: 'b', onActivePath: true }),
    row({ id: 'c' }),
  ];
  assert.deepEqual(leafMarkRow(rows, 'hidden-label'), { id: 'b', hidden: true });
  assert.deepEqual(leafMarkRow([...rows, row({ id: 'd', isLeaf: true, onActivePath: true })], 'd'), { id: 'd', hidden: false });
  assert.equal(leafMarkRow(rows, null), undefined);
  assert.equal(leafMarkRow([row({ id: 'c' })], 'x'), undefined);
});

test('session descriptions: age, dialect, entries, the session a fork came from', () => {
  const src = info({ uri: 'file:///s/src.jsonl', path: '/s/src.jsonl', name: 'CSV importer', entryCount: 12 });
  const fork = info({ uri: 'file:///s/fork.jsonl', path: '/s/fork.jsonl', parentSession: '/s/src.jsonl', entryCount: 1, modifiedMs: 0 });
  const orphan = info({ parentSession: '/gone/old.jsonl', entryCount: 2500, liveWriter: true });
  assert.equal(sessionDescription(fork, [src, fork], 90_000), '1m ago · omp · 1 entry · fork of CSV importer');
  assert.equal(sessionDescription(orphan, [orphan], 0), '● live · 0s ago · omp · 2,500 entries · fork of old.jsonl');
  assert.equal(sessionDescription(info({ name: 'N', firstUserMessage: 'hi\tthere' }), [], 0), '0s ago · omp · 1 entry · hi\u2409there');
});

test('folding: a folded row without a connector shows ⊞ before its text (as pi draws it); item menus know fold state', () => {
  const root = row({ prefix: '', text: 'user: start', folded: true, onActivePath: true, matches: [{ start: 6, end: 11 }] });
  assert.equal(rowLabel(root), '⊞ • user: start');
  const [[s, e]] = rowHighlights(root);
  assert.equal(rowLabel(root).slice(s, e), 'start');
  // A connector row carries its marker in the server's prefix: no second one.
  assert.equal(rowLabel(row({ prefix: '├⊞ ', text: 'user: A', folded: true })), '├⊞ user: A');
  assert.equal(rowLabel(row({ prefix: '├⊟ ', text: 'user: A', foldable: true })), '├⊟ user: A');
  assert.equal(rowContext(row({ foldable: true })), 'entry kind-message role-user foldable');
  assert.equal(rowContext(row({ foldable: true, folded: true })), 'entry kind-message role-user folded');
});
