#!/usr/bin/env node
// A model server of the tests' own: an OpenAI-compatible `POST /v1/chat/completions` (streamed or
// not) on loopback, whose answers depend on the prompt, so the real agents (pi, omp) run against it
// fully offline. An answer can be text or tool calls (the agent then runs its own tool and asks
// again with the result).
//
//   node scripts/testing/model-server.mjs [--port N] [--rules FILE] [--log FILE]
//
// Prints one line `{"port":N,"url":"http://127.0.0.1:N/v1"}` on stdout once it listens, and exits
// when its standard input closes (so a test that dies takes it along) or on SIGTERM.
//
// Answers, first rule that matches wins (rules are read from --rules on every request, so a test
// may rewrite the file between prompts):
//   [{"when": {"lastUser": "regex", "lastToolResult": "regex", "system": "regex", "any": true},
//     "reply": {"text": "...", "thinking": "...", "toolCalls": [{"name": "write", "arguments": {...}}],
//               "chunk": 8, "delayMs": 0, "hold": false, "status": 200, "error": "..."}}]
// `when` fields must all match (`lastUser`: the text of the last user message; `lastToolResult`: the
// last message is a tool result whose text matches; `system`: the system prompt). `hold: true`
// streams the first chunk and then waits until the client goes away (an abort). `status`/`error`
// answer an HTTP error instead. Without a matching rule: after a tool result, `done: <tool text>`;
// otherwise `echo: <last user text>` (without omp's `<system-reminder>` blocks). Text is streamed in
// chunks of `chunk` characters (default 8).
//
// --log FILE appends every request as one JSON line {"path", "body"}: tests read exactly what the
// model received.

import http from 'node:http';
import fs from 'node:fs';

const args = process.argv.slice(2);
function option(name, fallback) {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
}
const port = Number(option('--port', '0'));
const rulesFile = option('--rules', null);
const logFile = option('--log', null);

let callCounter = 0;

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === 'string' ? part : part && typeof part.text === 'string' ? part.text : ''))
      .join('');
  }
  return '';
}

function readRules() {
  if (!rulesFile) return [];
  try {
    const parsed = JSON.parse(fs.readFileSync(rulesFile, 'utf8'));
    return Array.isArray(parsed) ? parsed : [];
  } catch (error) {
    if (error.code === 'ENOENT') return [];
    throw new Error(`model-server: rules file ${rulesFile}: ${error.message}`);
  }
}

function matches(pattern, text) {
  return pattern === undefined || (text !== undefined && new RegExp(pattern, 's').test(text));
}

/** The facts a rule is matched against. */
function factsOf(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content))
    .join('\n');
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const last = messages[messages.length - 1];
  return {
    system,
    lastUser: lastUser ? textOf(lastUser.content) : '',
    lastToolResult: last && last.role === 'tool' ? textOf(last.content) : undefined,
  };
}

function chooseReply(body) {
  const facts = factsOf(body);
  for (const rule of readRules()) {
    const when = rule.when || {};
    if (
      matches(when.lastUser, facts.lastUser) &&
      matches(when.system, facts.system) &&
      (when.lastToolResult === undefined || matches(when.lastToolResult, facts.lastToolResult))
    ) {
      return rule.reply || {};
    }
  }
  if (facts.lastToolResult !== undefined) return { text: `done: ${facts.lastToolResult}` };
  // omp adds a `<system-reminder>` block to the user's text; the echo leaves it out.
  const said = facts.lastUser.replace(/<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, '');
  return { text: `echo: ${said}` };
}

function chunksOf(text, size) {
  const out = [];
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function usage() {
  return { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
}

async function stream(res, body, reply, closed) {
  const id = `chatcmpl-${++callCounter}`;
  const model = body.model || 'test-model';
  const created = Math.floor(Date.now() / 1000);
  const send = (delta, finish, extra) =>
    res.write(
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish ?? null }],
        ...extra,
      })}\n\n`,
    );
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const size = Math.max(1, reply.chunk || 8);
  const delay = reply.delayMs || 0;
  send({ role: 'assistant', content: '' });
  if (reply.thinking) {
    for (const piece of chunksOf(reply.thinking, size)) {
      if (closed()) return;
      send({ reasoning_content: piece });
      if (delay) await sleep(delay);
    }
  }
  const pieces = chunksOf(reply.text || '', size);
  for (let i = 0; i < pieces.length; i++) {
    if (closed()) return;
    send({ content: pieces[i] });
    if (reply.hold && i === 0) {
      while (!closed()) await sleep(20);
      return;
    }
    if (delay) await sleep(delay);
  }
  const calls = reply.toolCalls || [];
  calls.forEach((call, index) => {
    send({
      tool_calls: [
        {
          index,
          id: call.id || `call_${callCounter}_${index}`,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) },
        },
      ],
    });
  });
  send({}, calls.length ? 'tool_calls' : 'stop');
  res.write(
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usage() })}\n\n`,
  );
  res.write('data: [DONE]\n\n');
  res.end();
}

function whole(res, body, reply) {
  const calls = (reply.toolCalls || []).map((call, index) => ({
    id: call.id || `call_${++callCounter}_${index}`,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) },
  }));
  const message = { role: 'assistant', content: reply.text || '' };
  if (calls.length) message.tool_calls = calls;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: `chatcmpl-${++callCounter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model || 'test-model',
      choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }],
      usage: usage(),
    }),
  );
}

const server = http.createServer((req, res) => {
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (raw += chunk));
  req.on('end', async () => {
    try {
      if (req.method === 'GET' && req.url.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model', owned_by: 'tests' }] }));
        return;
      }
      if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no such endpoint: ${req.method} ${req.url}` } }));
        return;
      }
      const body = JSON.parse(raw || '{}');
      if (logFile) fs.appendFileSync(logFile, `${JSON.stringify({ path: req.url, body })}\n`);
      const reply = chooseReply(body);
      if (reply.status && reply.status !== 200) {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: reply.error || `status ${reply.status}`, type: 'test_error' } }));
        return;
      }
      let gone = false;
      res.on('close', () => (gone = true));
      if (body.stream) await stream(res, body, reply, () => gone);
      else whole(res, body, reply);
    } catch (error) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error && error.message ? error.message : error) } }));
    }
  });
});

server.listen(port, '127.0.0.1', () => {
  const actual = server.address().port;
  process.stdout.write(`${JSON.stringify({ port: actual, url: `http://127.0.0.1:${actual}/v1` })}\n`);
});

process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
