// The server's notifications reach every listener, although the language client keeps one handler
// per method (a second registration replaces the first, as the fake client below does).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotificationFanOut } from '../../src/notifications';

/** A client that, like the language client, keeps one handler per method. */
class OneHandlerClient {
  readonly handlers = new Map<string, (p: unknown) => void>();
  registrations = 0;
  onNotification(method: string, handler: (p: unknown) => void): void {
    this.registrations++;
    this.handlers.set(method, handler);
  }
  send(method: string, params: unknown): void {
    this.handlers.get(method)?.(params);
  }
}

test('every listener of a notification gets it, and a disposed one no more', () => {
  const client = new OneHandlerClient();
  const errors: string[] = [];
  const fan = new NotificationFanOut((m, h) => client.onNotification(m, h), (m, e) => errors.push(`${m}: ${String(e)}`));
  const seen: string[] = [];
  const tree = fan.on<{ revision: number }>('sessionTree/didChange', (p) => seen.push(`tree ${p.revision}`));
  const chat = fan.on<{ revision: number }>('sessionTree/didChange', (p) => seen.push(`chat ${p.revision}`));
  fan.on<{ kind: string }>('sessionTree/agentEvent', (p) => seen.push(`event ${p.kind}`));
  client.send('sessionTree/didChange', { revision: 1 });
  client.send('sessionTree/agentEvent', { kind: 'agentEnd' });
  assert.deepEqual(seen, ['tree 1', 'chat 1', 'event agentEnd']);
  assert.equal(client.registrations, 2, 'one registration per method');
  chat.dispose();
  client.send('sessionTree/didChange', { revision: 2 });
  assert.deepEqual(seen.slice(3), ['tree 2']);
  tree.dispose();
  client.send('sessionTree/didChange', { revision: 3 });
  assert.equal(seen.length, 4);
  assert.deepEqual(errors, []);
});

test('a listener that throws does not keep the notification from the others', () => {
  const client = new OneHandlerClient();
  const errors: string[] = [];
  const fan = new NotificationFanOut((m, h) => client.onNotification(m, h), (m, e) => errors.push(`${m}: ${(e as Error).message}`));
  const seen: number[] = [];
  fan.on<number>('m', () => {
    throw new Error('broken listener');
  });
  fan.on<number>('m', (p) => seen.push(p));
  client.send('m', 7);
  assert.deepEqual(seen, [7]);
  assert.deepEqual(errors, ['m: broken listener']);
});
