// The chat's transcript reads around an answer's end, with the real chat view and session
// controller against a fake server that records the order of the requests: the server answers
// one session's requests in order, so the tree's rows of the answer's last entry must go before
// the chat's transcript, and the answer's end and that change cost one transcript read, not two.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Api } from '../../src/api';
import { ChatProvider } from '../../src/chatView';
import { ChatReads } from '../../src/chatReads';
import type { AgentEventParams, DidChangeParams, OpenResult, RowsParams, RowsResult, TranscriptResult } from '../../src/protocol';
import { SessionController } from '../../src/session';

const URI = 'file:///a.jsonl';

class FakeApi {
  calls: string[] = [];
  revision = 1;
  private changeHandlers: ((p: DidChangeParams) => void)[] = [];
  private eventHandlers: ((p: AgentEventParams) => void)[] = [];
  async open(p: { uri: string }): Promise<OpenResult> {
    this.calls.push('open');
    return { uri: p.uri, sessionId: 's', dialect: 'pi', cwd: '/w', leaf: 'L', revision: this.revision, entryCount: 1, diagnostics: [] };
  }
  async close() {
    return { closed: true };
  }
  async rows(p: RowsParams): Promise<RowsResult> {
    this.calls.push('rows');
    const revision = this.revision;
    await new Promise((r) => setTimeout(r, 5));
    return { revision, leaf: 'L', rows: [{ id: 'L', kind: 'message', prefix: '', text: 'L' }], lines: [], selection: p.selection ?? 'L', windowStart: 0, totalRows: 1 };
  }
  async transcript(): Promise<TranscriptResult> {
    this.calls.push('transcript');
    const revision = this.revision;
    await new Promise((r) => setTimeout(r, 5));
    return { revision, items: [], omitted: 0 } as unknown as TranscriptResult;
  }
  async agent() {
    this.calls.push('agent');
    return { state: 'idle', agent: 'pi' };
  }
  onDidChange(h: (p: DidChangeParams) => void) {
    this.changeHandlers.push(h);
    return { dispose() {} };
  }
  onAgentEvent(h: (p: AgentEventParams) => void) {
    this.eventHandlers.push(h);
    return { dispose() {} };
  }
  onAgentDialog() {
    return { dispose() {} };
  }
  change() {
    this.revision++;
    this.changeHandlers.forEach((h) => h({ uri: URI, revision: this.revision, leaf: 'L', reason: 'follow' } as DidChangeParams));
  }
  ended() {
    this.eventHandlers.forEach((h) => h({ uri: URI, event: { kind: 'agentEnd' } } as unknown as AgentEventParams));
  }
}

const log = { appendLine: () => {} } as unknown as import('vscode').OutputChannel;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function setup() {
  const api = new FakeApi();
  const ctl = new SessionController(api as unknown as Api, log);
  const chat = new ChatProvider(ctl, log, {} as import('vscode').Uri);
  await ctl.open(URI);
  await sleep(30);
  api.calls = [];
  return { api, ctl, chat };
}

/** Waits until nothing more is asked for: the end's fallback is the longest wait (2 s). */
async function quiet(api: FakeApi, ms = 200): Promise<void> {
  let seen = -1;
  while (seen !== api.calls.length) {
    seen = api.calls.length;
    await sleep(ms);
  }
}

for (const order of ['end 1 ms before the change', 'change, then end', 'end while the read is on its way'] as const) {
  test(`answer end (${order}): one transcript read, after the tree's rows`, async () => {
    const { api, chat } = await setup();
    if (order === 'end 1 ms before the change') {
      api.ended();
      await sleep(1);
      api.change();
    } else if (order === 'change, then end') {
      api.change();
      api.ended();
    } else {
      api.change();
      while (!api.calls.includes('transcript')) await sleep(1);
      api.ended();
    }
    await quiet(api);
    assert.deepEqual(api.calls, ['rows', 'transcript']);
    chat.dispose();
  });
}

test('an answer end without a change reads the transcript once, after a moment', async () => {
  const { api, chat } = await setup();
  api.ended();
  assert.deepEqual(api.calls, [], 'not at once: the change of the last entry may follow');
  await quiet(api);
  assert.deepEqual(api.calls, ['transcript']);
  chat.dispose();
});

test('the end read waits for the rows of a change on their way, and has a fallback', () => {
  const timers: { fn: () => void; ms: number }[] = [];
  let reads = 0;
  const reads_ = new ChatReads(
    () => reads++,
    { set: (fn, ms) => timers.push({ fn, ms }) - 1, clear: (h) => (timers[h as number] = { fn: () => {}, ms: -1 }) },
    50,
    2000,
  );
  reads_.changed();
  reads_.ended();
  assert.equal(timers.at(-1)?.ms, 2000, 'rows on their way: the end waits for their read');
  const answered = reads_.started();
  assert.equal(reads_.owed, false, 'the read after the rows serves the end');
  reads_.ended();
  assert.equal(reads_.owed, false, 'an end while a read is on its way joins it');
  assert.equal(answered(), true, 'whose answer then takes the finished messages as they are now');
  reads_.ended();
  assert.equal(timers.at(-1)?.ms, 50);
  timers.at(-1)?.fn();
  assert.equal(reads, 1, 'no change came: the end reads when the grace ends');
});
