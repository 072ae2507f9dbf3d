/**
 * Reading the server's errors: the message and `error.data.kind` (protocol `ErrorKind`). No
 * imports beyond the protocol types, so every module (and the unit tests) can use it.
 */
import type * as P from './protocol';

/** A readable message for a failed request (the server puts the kind in `error.data.kind`). */
export function errorMessage(e: unknown): string {
  if (e && typeof e === 'object') {
    const err = e as { message?: unknown; data?: unknown };
    const kind = (err.data as P.ErrorData | undefined)?.kind;
    const msg = typeof err.message === 'string' ? err.message : String(e);
    return kind ? `${msg} (${kind})` : msg;
  }
  return String(e);
}

export function errorKind(e: unknown): P.ErrorKind | undefined {
  if (e && typeof e === 'object') return ((e as { data?: unknown }).data as P.ErrorData | undefined)?.kind;
  return undefined;
}

/**
 * Whether a request ended because it was cancelled: VS Code's `CancellationError` (the language
 * client throws it when our token was cancelled) or a JSON-RPC `RequestCancelled` (-32800) /
 * `ServerCancelled` (-32802) answer.
 */
export function isCancellation(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  const err = e as { name?: unknown; code?: unknown; message?: unknown };
  if (err.code === -32800 || err.code === -32802) return true;
  if (err.name === 'Canceled' || err.name === 'CancellationError') return true;
  return errorKind(e) === undefined && typeof err.message === 'string' && /^cancell?ed\b/i.test(err.message);
}
