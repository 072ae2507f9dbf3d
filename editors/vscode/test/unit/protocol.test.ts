// protocol.ts against the protocol as data (protocol-ext/generated/protocol.json, generated from
// the Rust crate, with an example of every method where every optional field appears): method
// names, error kinds, commands, and every key of every example declared in the TS shapes — in
// both directions, so a renamed or added Rust field fails here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ALL_METHODS, EXPERIMENTAL_KEY, Methods, PROTOCOL_VERSION, ServerCommands } from '../../src/protocol';

const contractFile = path.resolve(process.cwd(), '../../protocol-ext/generated/protocol.json');
// The contract is committed: without it these tests fail (they never pass without running).
assert.ok(fs.existsSync(contractFile), `${contractFile} not found`);
interface Contract {
  version: number;
  experimentalKey: string;
  commands: string[];
  errorKinds: { kind: string }[];
  methods: { method: string; kind: string; direction: string; params: unknown; result: unknown }[];
}
const contract = (): Contract => JSON.parse(fs.readFileSync(contractFile, 'utf8')) as Contract;
const tsSource = fs.readFileSync(path.resolve(process.cwd(), 'src/protocol.ts'), 'utf8');

/** interface name → field name → declared type (as written). */
function interfaces(src: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const m of src.matchAll(/export interface (\w+) \{([\s\S]*?)\n\}/g)) {
    const fields = new Map<string, string>();
    for (const f of m[2].matchAll(/^ {2}(\w+)\??: ([^;]+);/gm)) fields.set(f[1], f[2]);
    out.set(m[1], fields);
  }
  return out;
}
const TS = interfaces(tsSource);

/** Params and result shapes of each method, by TS interface name. */
const SHAPES: Record<string, [string, string | null]> = {
  listSessions: ['ListSessionsParams', 'ListSessionsResult'],
  open: ['OpenParams', 'OpenResult'],
  close: ['OpenParams', 'CloseResult'],
  rows: ['RowsParams', 'RowsResult'],
  tree: ['TreeParams', 'TreeResult'],
  entry: ['EntryParams', 'EntryResult'],
  context: ['ContextParams', 'ContextResult'],
  navigate: ['NavigateParams', 'NavigateResult'],
  branch: ['BranchParams', 'BranchResult'],
  setLabel: ['SetLabelParams', 'MutationResult'],
  append: ['AppendParams', 'MutationResult'],
  setName: ['SetNameParams', 'NameResult'],
  nameFromPlanTitle: ['NameFromPlanTitleParams', 'NameResult'],
  rewindPoints: ['RewindPointsParams', 'RewindPointsResult'],
  rewindCompare: ['RewindCompareParams', 'RewindCompareResult'],
  rewindFile: ['RewindFileParams', 'RewindFileResult'],
  rewindRestore: ['RewindRestoreParams', 'RewindRestoreResult'],
  rewindUndo: ['RewindUndoParams', 'RewindRestoreResult'],
  didRecordRewindPoint: ['DidRecordRewindPointParams', null],
  didChange: ['DidChangeParams', null],
  didNavigate: ['DidNavigateParams', null],
  didBranch: ['DidBranchParams', null],
  beforeTree: ['BeforeTreeParams', 'BeforeTreeResult'],
  beforeBranch: ['BeforeBranchParams', 'BeforeBranchResult'],
  transcript: ['TranscriptParams', 'TranscriptResult'],
  prompt: ['PromptParams', 'PromptResult'],
  abort: ['AbortParams', 'AbortResult'],
  agent: ['AgentParams', 'AgentStatus'],
  stopAgent: ['AgentParams', 'AgentStatus'],
  installBridge: ['InstallBridgeParams', 'InstallBridgeResult'],
  agentEvent: ['AgentEventParams', null],
  agentDialog: ['AgentDialogParams', 'AgentDialogResult'],
};

/** Checks an example value against a TS interface, recursing into fields typed by other interfaces. */
function conform(value: unknown, iface: string, where: string, problems: string[]): void {
  const fields = TS.get(iface);
  if (!fields) return problems.push(`${where}: no interface ${iface} in protocol.ts`) as unknown as void;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return;
  const keys = Object.keys(value as object);
  for (const k of keys) if (!fields.has(k)) problems.push(`${where}: "${k}" is sent but ${iface} does not declare it`);
  for (const [k, type] of fields) {
    if (!keys.includes(k)) {
      problems.push(`${where}: ${iface}.${k} is not in the protocol's example`);
      continue;
    }
    const inner = /^(\w+)(\[\])?( \| null)?$/.exec(type);
    if (!inner || !TS.has(inner[1])) continue;
    const v = (value as Record<string, unknown>)[k];
    if (inner[2] && Array.isArray(v)) v.forEach((x, i) => conform(x, inner[1], `${where}.${k}[${i}]`, problems));
    else if (!inner[2]) conform(v, inner[1], `${where}.${k}`, problems);
  }
}

test('method names are exactly the protocol\'s', () => {
  assert.deepEqual([...ALL_METHODS].sort(), contract().methods.map((m) => m.method).sort());
  assert.deepEqual(Object.keys(SHAPES).sort(), Object.keys(Methods).sort());
});

test('version, capability key, commands and error kinds match', () => {
  const c = contract();
  assert.equal(PROTOCOL_VERSION, c.version);
  assert.equal(EXPERIMENTAL_KEY, c.experimentalKey);
  assert.deepEqual(Object.values(ServerCommands).sort(), [...c.commands].sort());
  const union = /export type ErrorKind =([\s\S]*?);/.exec(tsSource)?.[1] ?? '';
  const kinds = [...union.matchAll(/'(\w+)'/g)].map((m) => m[1]).sort();
  assert.deepEqual(kinds, c.errorKinds.map((e) => e.kind).sort());
});

test('every example params/result has exactly the fields protocol.ts declares', () => {
  const problems: string[] = [];
  const byName = new Map(Object.entries(Methods).map(([k, v]) => [v as string, k]));
  for (const m of contract().methods) {
    const key = byName.get(m.method);
    if (!key) continue;
    const [params, result] = SHAPES[key];
    conform(m.params, params, `${m.method} params`, problems);
    if (result && m.result !== null) conform(m.result, result, `${m.method} result`, problems);
  }
  assert.deepEqual(problems, []);
});

test('enums as strings: the examples use values the TS unions list', () => {
  const c = contract();
  const unionOf = (name: string) => [...(new RegExp(`export type ${name} =([^;]*);`).exec(tsSource)?.[1] ?? '').matchAll(/'(\w+)'/g)].map((m) => m[1]);
  const get = (method: string) => c.methods.find((m) => m.method === method)!;
  assert.ok(unionOf('FilterMode').includes((get(Methods.rows).params as { filter: string }).filter));
  assert.ok(unionOf('SummarizeChoice').includes((get(Methods.navigate).params as { summarize: string }).summarize));
  assert.ok(unionOf('NavigateDecision').includes((get(Methods.navigate).result as { decision: string }).decision));
  assert.ok(unionOf('AppendKind').includes((get(Methods.append).params as { kind: string }).kind));
  assert.ok(unionOf('ChangeReason').includes((get(Methods.didChange).params as { reason: string }).reason));
  // Every enum variant the Rust crate defines (methods.rs / types.rs) is in the TS union.
  const rust = fs.readFileSync(path.resolve(process.cwd(), '../../protocol-ext/src/methods.rs'), 'utf8') +
    fs.readFileSync(path.resolve(process.cwd(), '../../protocol-ext/src/types.rs'), 'utf8');
  const camel = (s: string) => s[0].toLowerCase() + s.slice(1);
  for (const [rs, ts] of [['FilterMode', 'FilterMode'], ['SummarizeChoice', 'SummarizeChoice'], ['NavigateDecision', 'NavigateDecision'], ['AppendKind', 'AppendKind'], ['ChangeReason', 'ChangeReason'], ['Dialect', 'Dialect']]) {
    const body = new RegExp(`pub enum ${rs} \\{([\\s\\S]*?)\\n\\}`).exec(rust)?.[1] ?? '';
    const variants = [...body.matchAll(/^\s{4}(\w+),/gm)].map((m) => camel(m[1])).sort();
    assert.deepEqual(unionOf(ts).sort(), variants, rs);
  }
});
