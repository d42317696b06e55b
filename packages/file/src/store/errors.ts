// The file adapter's errors: one factory, and how raw failures become sessionkit errors.

import { isSessionKitError } from '@sessionkit/core';
import { errorsFor, fsErrorToSessionKit } from '@sessionkit/core/adapter';

/** Errors of this adapter (messages start with core's `file` prefix). */
export const errors = errorsFor('file');

/**
 * What a public call throws for `e`: sessionkit errors unchanged; file-system errors as
 * core maps them (`unavailable`, `invalid_argument`…), naming the call, the session and the
 * store folder; a `SyntaxError` or `RangeError` while handling a session as `corrupt`.
 */
export function toStoreError(e: unknown, what: string, dir: string, id?: string): unknown {
  if (isSessionKitError(e)) return e;
  const mapped = fsErrorToSessionKit(errors, e, `${what}${id ? ` "${id}"` : ''} in ${dir}`);
  if (isSessionKitError(mapped)) return mapped;
  if (e instanceof SyntaxError && id) return errors.corrupt(id, e.message, e);
  // Stored values are at most 512 levels deep (checked before every write); a value
  // stored by an older version that is too deep to handle is damage, not a crash.
  if (e instanceof RangeError && id) return errors.corrupt(id, e.message, e);
  return e;
}

/** `not_found` for a folder without data; `corrupt` when a log survives its snapshot. */
export function missingSnapshot(id: string, logs: number[]) {
  if (logs.length === 0) return errors.notFound(id);
  return errors.corrupt(
    id,
    `its snapshot is missing (log-${logs[logs.length - 1]}.skr has no snap file)`,
  );
}
