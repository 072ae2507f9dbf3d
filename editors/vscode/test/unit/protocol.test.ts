// The TypeScript protocol mirror against the Rust crate it mirrors (protocol-ext/src): every
// method name, and every field of the structs the extension reads, must exist there.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ALL_METHODS, EXPERIMENTAL_KEY, ServerCommands } from '../../src/protocol';

const protoDir = path.resolve(process.cwd(), '../../protocol-ext/src');
const read = (f: string) => fs.readFileSync(path.join(protoDir, f), 'utf8');
const have = fs.existsSync(protoDir);

test('every sessionTree/ method of the Rust crate is in protocol.ts and vice versa', { skip: !have && 'protocol-ext not found' }, () => {
  const rust = [...read('methods.rs').matchAll(/"(sessionTree\/\w+)"/g)].map((m) => m[1]).sort();
  assert.deepEqual([...ALL_METHODS].sort(), rust);
});

test('capability key and server command names match the Rust crate', { skip: !have && 'protocol-ext not found' }, () => {
  const caps = read('capabilities.rs');
  assert.ok(caps.includes(`EXPERIMENTAL_KEY: &str = "${EXPERIMENTAL_KEY}"`));
  for (const c of Object.values(ServerCommands)) assert.ok(caps.includes(`"${c}"`), c);
});

const camel = (s: string) => s.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

/** Field names (camelCase) of each `pub struct` in a Rust file. */
function structs(src: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of src.matchAll(/pub struct (\w+) \{([\s\S]*?)\n\}/g)) {
    out.set(m[1], [...m[2].matchAll(/pub (\w+):/g)].map((f) => camel(f[1])));
  }
  return out;
}

test('field names of the shapes in protocol.ts exist in the Rust structs', { skip: !have && 'protocol-ext not found' }, () => {
  const rs = new Map([...structs(read('types.rs')), ...structs(read('methods.rs')), ...structs(read('capabilities.rs'))]);
  const ts = fs.readFileSync(path.resolve(process.cwd(), 'src/protocol.ts'), 'utf8');
  let checked = 0;
  for (const m of ts.matchAll(/export interface (\w+) \{([\s\S]*?)\n\}/g)) {
    const fields = rs.get(m[1]);
    if (!fields) continue;
    for (const f of m[2].matchAll(/^\s+(\w+)\??:/gm)) {
      assert.ok(fields.includes(f[1]), `${m[1]}.${f[1]} is not a field of the Rust struct (${fields.join(', ')})`);
      checked++;
    }
  }
  assert.ok(checked > 100, `only ${checked} fields checked`);
});
