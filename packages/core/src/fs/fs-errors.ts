import type { ErrorFactory, SessionKitError } from '../errors.js';

// errno codes that mean the path itself is unusable (the caller's mistake), as opposed to
// a failing disk or an exhausted resource (worth a retry).
const BAD_PATH_CODES = new Set([
  'ENOENT',
  'ENOTDIR',
  'EISDIR',
  'EACCES',
  'EPERM',
  'ENAMETOOLONG',
  'EROFS',
]);

/**
 * A file-system error (it has an errno `code` and a `syscall`) as a `SessionKitError`:
 * `invalid_argument` when the path itself is unusable, `unavailable` otherwise, with the
 * original as `cause`. Anything else (a store's own errors) is returned unchanged.
 */
export function fsErrorToSessionKit(
  errors: ErrorFactory,
  e: unknown,
  what: string,
): unknown | SessionKitError {
  const err = e as { code?: unknown; syscall?: unknown } | null;
  if (typeof err !== 'object' || err === null || typeof err.syscall !== 'string') return e;
  const code = typeof err.code === 'string' ? err.code : 'EIO';
  return errors.make(
    BAD_PATH_CODES.has(code) ? 'invalid_argument' : 'unavailable',
    `${what}: ${code}`,
    { cause: e },
  );
}
