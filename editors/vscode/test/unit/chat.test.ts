// The Chat view's model and rendering without VS Code: streamed deltas land in their message's
// block, the finished message replaces them, the transcript takes over what it holds; markdown is
// rendered with raw HTML off; the agent's errors and states read as the user needs them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentAvailable, agentErrorText, agentSettings, statusDetail, statusLine, statusSetting } from '../../src/agentText';
import { ChatDraft } from '../../src/chatDraft';
import { Conversation } from '../../src/chatModel';
import { escapeHtml, renderBlock, renderEntry } from '../../src/chatRender';
import type { AgentEventBody, AgentStatus, TranscriptItem } from '../../src/protocol';

const URI = 'file:///s.jsonl';
let seq = 0;
const ev = (event: AgentEventBody, uri = URI) => ({ uri, seq: ++seq, turn: 1, event });
const user = (text: string, id: string | null = null): TranscriptItem => ({ entryId: id, role: 'user', detail: null, blocks: [{ kind: 'text', text }] });
const answer = (text: string, id: string | null = null): TranscriptItem => ({ entryId: id, role: 'assistant', detail: '', blocks: [{ kind: 'markdown', text }] });
const status = (over: Partial<AgentStatus>): AgentStatus => ({
  uri: URI, agent: 'pi', state: 'idle', source: 'spawned', pid: 1, model: 'loop/test-model', armed: true, executable: '/bin/pi', message: null, stderrTail: [], ...over,
});

test('deltas append to their message and block, in order; messageEnd replaces what streamed', () => {
  const c = new Conversation();
  c.reset(URI);
  c.setTranscript({ revision: 1, leaf: 'a', items: [user('hi', 'u1'), answer('hello', 'a1')], omitted: 0 }, new Set());
  assert.deepEqual(c.apply(ev({ kind: 'agentStart' })), { kind: 'status' });
  assert.equal(c.running, true);
  c.apply(ev({ kind: 'messageStart', message: 1, role: 'user' }));
  c.apply(ev({ kind: 'messageEnd', message: 1, item: user('next') }));
  c.apply(ev({ kind: 'messageStart', message: 2, role: 'assistant' }));
  c.apply(ev({ kind: 'delta', message: 2, block: 0, delta: 'thinking', text: 'Let me ' }));
  c.apply(ev({ kind: 'delta', message: 2, block: 0, delta: 'thinking', text: 'see.' }));
  assert.deepEqual(c.apply(ev({ kind: 'delta', message: 2, block: 1, delta: 'text', text: 'Bon' })), { kind: 'entry', key: 'm:2' });
  c.apply(ev({ kind: 'delta', message: 2, block: 1, delta: 'text', text: 'jour' }));
  c.apply(ev({ kind: 'delta', message: 9, block: 0, delta: 'text', text: 'x' }, 'file:///other.jsonl'));
  const streaming = c.entry('m:2');
  assert.ok(streaming && streaming.kind === 'message' && streaming.streaming);
  assert.deepEqual(streaming.item.blocks, [
    { kind: 'thinking', text: 'Let me see.' },
    { kind: 'markdown', text: 'Bonjour' },
  ]);
  assert.equal(c.deltas, 4);
  const final: TranscriptItem = { entryId: null, role: 'assistant', detail: '', blocks: [{ kind: 'thinking', text: 'Let me see.' }, { kind: 'markdown', text: 'Bonjour' }] };
  c.apply(ev({ kind: 'messageEnd', message: 2, item: final }));
  const ended = c.entry('m:2');
  assert.ok(ended && ended.kind === 'message' && !ended.streaming);
  assert.deepEqual(c.entries().map((e) => e.key), ['e:u1', 'e:a1', 'm:1', 'm:2']);
  // A transcript asked for during the turn holds the user message but not yet the answer.
  c.setTranscript({ revision: 2, leaf: 'u2', items: [user('hi', 'u1'), answer('hello', 'a1'), user('next', 'u2')], omitted: 0 }, c.endedKeys());
  assert.deepEqual(c.entries().map((e) => e.key), ['e:u1', 'e:a1', 'e:u2', 'm:2']);
  // After the turn, the transcript has it all.
  c.apply(ev({ kind: 'agentEnd' }));
  c.setTranscript(
    { revision: 3, leaf: 'a2', items: [user('hi', 'u1'), answer('hello', 'a1'), user('next', 'u2'), { ...final, entryId: 'a2' }], omitted: 0 },
    c.endedKeys(),
  );
  assert.deepEqual(c.entries().map((e) => e.key), ['e:u1', 'e:a1', 'e:u2', 'e:a2']);
});

test('a message still streaming stays after a transcript; tools show progress until their result', () => {
  const c = new Conversation();
  c.reset(URI);
  c.apply(ev({ kind: 'agentStart' }));
  c.apply(ev({ kind: 'delta', message: 1, block: 0, delta: 'text', text: 'Writ' }));
  c.setTranscript({ revision: 1, leaf: null, items: [], omitted: 0 }, c.endedKeys());
  assert.deepEqual(c.entries().map((e) => e.key), ['m:1']);
  c.apply(ev({ kind: 'toolStart', toolCallId: 'call_1', name: 'write' }));
  c.apply(ev({ kind: 'toolUpdate', toolCallId: 'call_1', text: 'half' }));
  let tool = c.entry('tool:call_1');
  assert.ok(tool && tool.kind === 'tool' && tool.output === 'half' && !tool.done);
  c.apply(ev({ kind: 'toolEnd', toolCallId: 'call_1', name: 'write', isError: true }));
  tool = c.entry('tool:call_1');
  assert.ok(tool && tool.kind === 'tool' && tool.done && tool.isError);
  const result: TranscriptItem = {
    entryId: null, role: 'toolResult', detail: 'write',
    blocks: [{ kind: 'toolResult', id: 'call_1', name: 'write', summary: 'failed', text: 'failed', isError: true }],
  };
  assert.deepEqual(c.apply(ev({ kind: 'messageEnd', message: 2, item: result })), { kind: 'entries' });
  assert.equal(c.entry('tool:call_1'), undefined);
});

test('errors, notices and an exit are shown in the conversation; a new prompt clears them', () => {
  const c = new Conversation();
  c.reset(URI);
  c.apply(ev({ kind: 'error', message: 'model said 500' }));
  c.apply(ev({ kind: 'exited', code: 1, stderrTail: ['boom', 'bye'] }));
  const texts = c.entries().map((e) => (e.kind === 'notice' ? `${e.level}: ${e.text}` : e.key));
  assert.deepEqual(texts, ['error: model said 500', 'error: The agent exited (code 1).\nboom\nbye']);
  c.startTurn();
  assert.deepEqual(c.entries(), []);
  c.apply(ev({ kind: 'status', status: status({ state: 'running' }) }));
  assert.equal(c.status?.state, 'running');
  c.reset('file:///b.jsonl');
  assert.equal(c.status, undefined);
  assert.deepEqual(c.apply(ev({ kind: 'agentStart' })), { kind: 'none' }, 'events of another session are ignored');
});

test('markdown is rendered with raw HTML shown as text; everything else escaped', () => {
  const md = renderBlock({ kind: 'markdown', text: '**bold** <img src=x onerror=alert(1)> [x](javascript:alert(1))' }, 'k');
  assert.match(md, /<strong>bold<\/strong>/);
  assert.ok(!md.includes('<img'), md);
  assert.ok(md.includes('&lt;img'), md);
  assert.ok(!/href="javascript:/.test(md), md);
  assert.equal(renderBlock({ kind: 'text', text: '<b>&' }, 'k'), '<div class="block text">&lt;b&gt;&amp;</div>');
  assert.equal(escapeHtml(`"'`), '&quot;&#39;');
});

test('thinking is folded; tool calls and results are one line, expandable to the whole', () => {
  const thinking = renderBlock({ kind: 'thinking', text: 'a\nb\n' }, 'm:1:0');
  assert.match(thinking, /^<details class="block thinking" data-fold="m:1:0"><summary>Thinking · 2 lines<\/summary>/);
  assert.ok(!thinking.includes(' open'), 'folded');
  const call = renderBlock({ kind: 'toolCall', id: 'c', name: 'write', summary: 'write: a<b>.txt', arguments: '{\n  "path": "a"\n}' }, 'k');
  assert.match(call, /<summary><span class="glyph">⚙<\/span> write: a&lt;b&gt;\.txt<\/summary><pre>\{\n {2}&quot;path&quot;: &quot;a&quot;\n\}<\/pre>/);
  const result = renderBlock({ kind: 'toolResult', id: 'c', name: 'bash', summary: 'line 1 (+2 more)', text: 'line 1\n2\n3', isError: true }, 'k');
  assert.match(result, /class="block tool-result error"/);
  assert.match(result, /<summary><span class="glyph">✗<\/span> line 1 \(\+2 more\)<\/summary><pre>line 1\n2\n3<\/pre>/);
  const cmd = renderBlock({ kind: 'command', command: 'ls', output: 'a\n', exitCode: 0 }, 'k');
  assert.match(cmd, /<summary><span class="glyph">\$<\/span> ls · exit 0<\/summary><pre>a\n<\/pre>/);
  assert.equal(renderBlock({ kind: 'image', mimeType: 'image/png' }, 'k'), '<div class="block image">[image: image/png]</div>');
  assert.equal(renderBlock({ kind: 'notice', text: 'Aborted', isError: false }, 'k'), '<div class="block notice">Aborted</div>');
});

test('entries: a heading per message, a streaming mark, compact tool results', () => {
  const html = renderEntry({ kind: 'message', key: 'm:3', item: answer('hi'), streaming: true });
  assert.match(html, /^<div class="entry msg assistant streaming" data-key="m:3"><div class="role">assistant<\/div><div class="block md"><p>hi<\/p>\n<\/div><\/div>$/);
  const tr = renderEntry({
    kind: 'message', key: 'e:t', streaming: false,
    item: { entryId: 't', role: 'toolResult', detail: 'read', blocks: [{ kind: 'toolResult', id: 'c', name: 'read', summary: 'ok', text: 'ok' }] },
  });
  assert.ok(!tr.includes('class="role"'), tr);
  assert.match(renderEntry({ kind: 'notice', key: 'n:1', text: '<x>', level: 'error' }), /class="entry notice error"[^>]*>&lt;x&gt;</);
});

test('agent texts: the state line, what Send does, the setting to open, each error kind', () => {
  assert.equal(statusLine(status({})), 'pi · idle · loop/test-model');
  assert.equal(statusLine(status({ state: 'running', source: 'terminal' })), 'pi (in your terminal) · answering… · loop/test-model');
  assert.equal(statusLine(status({ state: 'none', model: null })), 'pi · not running (Send starts it)');
  const missing = status({ state: 'unavailable', agent: 'omp', message: 'omp is not installed (no `omp` on PATH)' });
  assert.equal(agentAvailable(missing), false);
  assert.equal(agentAvailable(undefined), true);
  assert.equal(statusSetting(missing), 'sessiontree.agent.ompPath');
  assert.match(statusDetail(missing), /Send appends your message without an answer; set sessiontree\.agent\.ompPath/);
  assert.equal(statusSetting(status({ state: 'unavailable', message: 'the live agent is turned off (agent.disabled)' })), 'sessiontree.agent.disabled');
  assert.equal(statusDetail(status({ state: 'exited', stderrTail: ['a', 'b'] })), 'a\nb');
  assert.match(statusDetail(status({ source: 'terminal', armed: false })), /press Enter on \/sessiontree/);
  const notInstalled = agentErrorText('agentNotInstalled', 'pi is not installed', 'pi');
  assert.deepEqual(notInstalled, { text: 'pi is not installed. Set sessiontree.agent.piPath in your user settings.', setting: 'sessiontree.agent.piPath' });
  assert.match(agentErrorText('agentNotArmed', 'x', 'omp').text, /press Enter on \/sessiontree in its terminal/);
  assert.match(agentErrorText('agentBusy', 'x', 'pi').text, /still answering: wait for it to finish, or press Stop/);
  assert.equal(agentErrorText('agentFailed', 'exited: boom', 'pi').text, 'pi failed: exited: boom');
  assert.match(agentErrorText('agentRunning', 'an omp process works here', 'omp').text, /Append Without Running the Agent/);
  assert.equal(agentErrorText(undefined, 'plain', 'pi').text, 'plain');
});

test('agent settings come only from what the user set, cleaned', () => {
  const user: Record<string, unknown> = {
    'agent.piPath': ' /opt/pi ', 'agent.ompPath': '', 'agent.piArgs': ['--model', 'x', 3], 'agent.idleSeconds': 30.7, 'agent.disabled': false,
  };
  assert.deepEqual(agentSettings((k) => user[k]), { piPath: '/opt/pi', piArgs: ['--model', 'x'], idleSeconds: 30 });
  assert.deepEqual(agentSettings(() => undefined), {});
  assert.deepEqual(agentSettings((k) => (k === 'agent.disabled' || k === 'agent.ownSummaries' ? true : undefined)), { disabled: true, ownSummaries: true });
});

test('the chat input belongs to its session: switching keeps each text, a send clears only its own', () => {
  const d = new ChatDraft();
  assert.equal(d.sessionChanged('file:///a.jsonl'), '');
  d.text = 'prefilled in a';
  assert.equal(d.sessionChanged('file:///b.jsonl'), '', "b does not get a's text");
  d.text = 'typed in b';
  assert.equal(d.sessionChanged('file:///a.jsonl'), 'prefilled in a');
  assert.equal(d.sentFrom('file:///b.jsonl'), false, "b's send does not clear the input on screen (a's)");
  assert.equal(d.text, 'prefilled in a');
  assert.equal(d.sessionChanged('file:///b.jsonl'), '', "b's text went with its send");
  assert.equal(d.sessionChanged('file:///b.jsonl'), '', 'the same session again changes nothing');
  d.text = 'again';
  assert.equal(d.sentFrom('file:///b.jsonl'), true);
  assert.equal(d.text, '');
});
