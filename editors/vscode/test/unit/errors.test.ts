// Reading the server's errors and recognising a cancelled request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorKind, errorMessage, isCancellation } from '../../src/errors';

test('error message carries the protocol kind', () => {
  const e = Object.assign(new Error('no summary model is configured'), { code: -32803, data: { kind: 'noModel', revision: 3 } });
  assert.equal(errorKind(e), 'noModel');
  assert.equal(errorMessage(e), 'no summary model is configured (noModel)');
  assert.equal(errorMessage('plain'), 'plain');
  assert.equal(errorKind(new Error('x')), undefined);
  // A failed summary provider (HTTP status, refused, TLS, malformed stream, command exit).
  const p = Object.assign(new Error('the branch summary failed (openai provider): TLS handshake with api.example failed'), { code: -32803, data: { kind: 'provider' } });
  assert.equal(errorKind(p), 'provider');
  assert.ok(errorMessage(p).endsWith('(provider)'));
  assert.ok(!isCancellation(p));
});

test('cancellation: VS Code CancellationError, RequestCancelled, ServerCancelled; not a noModel error', () => {
  const canceled = Object.assign(new Error('Canceled'), { name: 'Canceled' });
  assert.ok(isCancellation(canceled));
  assert.ok(isCancellation({ code: -32800, message: 'Request cancelled' }));
  assert.ok(isCancellation({ code: -32802, message: 'server cancelled' }));
  assert.ok(!isCancellation(Object.assign(new Error('cancelled by x'), { data: { kind: 'noModel' } })));
  assert.ok(!isCancellation(new Error('boom')));
  assert.ok(!isCancellation(undefined));
});
