// Error factory of this package and the mapping of ioredis / Redis errors to sessionkit codes.
import { isSessionKitError, type SessionKitError } from '@sessionkit/core';
import { errorsFor } from '@sessionkit/core/adapter';

/** Error factory of this package: messages start with `[sessionkit/redis]`. */
export const errors = errorsFor('redis');

/** Reply prefixes after which the same call may succeed later (the server is busy or moving). */
const RETRYABLE_REPLIES = [
  'LOADING',
  'BUSY',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'MASTERDOWN',
  'READONLY',
  'NOREPLICAS',
  'OOM',
  'MOVED',
  'ASK',
];

/** Reply prefixes that mean the connection settings are wrong (retrying cannot help). */
const SETTINGS_REPLIES = ['NOAUTH', 'WRONGPASS', 'NOPERM', 'ERR AUTH', 'ERR invalid password'];

function isReplyError(e: unknown): e is Error {
  return e instanceof Error && e.name === 'ReplyError';
}

/**
 * Wraps an ioredis error in a `SessionKitError` with the original as `cause`:
 * - `unavailable` (retryable): every error that is not a server reply (connection refused,
 *   reset, closed, timeouts, ioredis giving up after its retries, a cluster without a
 *   reachable node) and the replies of a server that is busy, loading, failing over or out
 *   of memory (`LOADING`, `BUSY`, `CLUSTERDOWN`, `TRYAGAIN`, `READONLY`, `OOM` …);
 * - `invalid_argument`: authentication and permission replies (`NOAUTH`, `WRONGPASS`, `NOPERM`);
 * - `corrupt`: any other reply (`WRONGTYPE`, a script error): keys under the prefix were
 *   written by something else.
 * The message names what was being done and the server's text, never a password.
 */
export function wrapRedisError(e: unknown, doing: string): SessionKitError {
  if (isSessionKitError(e)) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (!isReplyError(e)) {
    return errors.unavailable(`${doing}: cannot reach Redis (${message})`, e);
  }
  if (RETRYABLE_REPLIES.some((p) => message.startsWith(p))) {
    return errors.unavailable(`${doing}: Redis is not serving (${message})`, e);
  }
  if (SETTINGS_REPLIES.some((p) => message.startsWith(p))) {
    return errors.make(
      'invalid_argument',
      `${doing}: Redis refused the connection settings (${message}) — check the user and password`,
      { cause: e },
    );
  }
  return errors.make('corrupt', `${doing}: unexpected Redis reply (${message})`, { cause: e });
}
