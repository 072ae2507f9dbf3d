#!/usr/bin/env node
// A home folder for the real agents in the editors' tests: pi's and omp's only model is the tests'
// loopback model server (scripts/testing/model-server.mjs), as server/lsp/tests/support/agents.rs
// sets up for the server's own tests. Run the agents (and the editor that starts them) with
// HOME=<home>, PI_OFFLINE=1 and a private XDG_RUNTIME_DIR.
//
//   node scripts/testing/agent-home.mjs --home DIR --url http://127.0.0.1:N/v1
//
// Writes DIR/.pi/agent/models.json and DIR/.omp/agent/models.yml (provider `loop`, model
// `test-model`) and DIR/run (mode 0700, for XDG_RUNTIME_DIR); prints DIR.

import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  if (i < 0 || i + 1 >= args.length) {
    console.error(`agent-home: ${name} is required`);
    process.exit(2);
  }
  return args[i + 1];
};
const home = path.resolve(option('--home'));
const url = option('--url');

const compat = { supportsDeveloperRole: false, supportsReasoningEffort: false };
fs.mkdirSync(path.join(home, '.pi/agent'), { recursive: true });
fs.mkdirSync(path.join(home, '.omp/agent'), { recursive: true });
fs.mkdirSync(path.join(home, 'run'), { recursive: true, mode: 0o700 });
fs.chmodSync(path.join(home, 'run'), 0o700);
fs.writeFileSync(
  path.join(home, '.pi/agent/models.json'),
  JSON.stringify({ providers: { loop: { baseUrl: url, api: 'openai-completions', apiKey: 'test', compat, models: [{ id: 'test-model' }] } } }),
);
fs.writeFileSync(
  path.join(home, '.omp/agent/models.yml'),
  [
    'providers:',
    '  loop:',
    `    baseUrl: ${url}`,
    '    api: openai-completions',
    '    apiKey: test',
    '    compat:',
    '      supportsDeveloperRole: false',
    '      supportsReasoningEffort: false',
    '    models:',
    '      - id: test-model',
    '',
  ].join('\n'),
);
console.log(home);
