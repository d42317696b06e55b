import { type ErrorCode, isSessionKitError, type SessionKitError } from '@sessionkit/core';
import { errorsFor } from '@sessionkit/core/adapter';
import { isConnectionError } from './connection.js';
import { UPDATED_AT_RANGE } from './migrations/012-updated-at-range.js';

/** Error factory of this package: messages start with `[sessionkit/postgres]`. */
export const errors = errorsFor('postgres');

/** SQLSTATEs after which the whole statement or transaction may simply run again. */
export function isRetryableTxError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/** The SQLSTATE class: its first two characters. */
const classOf = (code: string) => code.slice(0, 2);

/** The SQLSTATE of a server error (five characters), or `''` for any other error. */
export function sqlState(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : '';
}

/**
 * Whether `e` is schema version 12's check failing: a write that would move a session's
 * `updated_at` past the latest date a store keeps.
 */
function isUpdatedAtPastRange(e: unknown): boolean {
  return sqlState(e) === '23514' && (e as { constraint?: unknown }).constraint === UPDATED_AT_RANGE;
}

/** SQLSTATEs that mean a table, function, column or the schema itself is missing. */
const MISSING_OBJECT = new Set(['42P01', '42883', '3F000', '42703']);

/**
 * The sessionkit code a driver error maps to (the table in the README):
 * - `unavailable` (safe to retry): connection failures (class 08, network errnos, pg's
 *   "Connection terminated" family and pool timeouts, i.e. any error without a
 *   SQLSTATE), operator intervention (class 57: admin shutdown, crash recovery, query
 *   cancelled or statement_timeout), insufficient resources (53: disk full, out of
 *   memory, too many connections), system errors (58), `55P03` (lock_timeout), `25P03`
 *   (idle-in-transaction timeout), and deadlocks/serialization
 *   failures (40P01/40001) still failing after the adapter's own retries — the
 *   transaction was rolled back, nothing was written, the same call may run again;
 * - `invalid_argument`: data exceptions (class 22, a value PostgreSQL cannot store), a
 *   connection string pg cannot parse (`ERR_INVALID_URL`), and connection settings the
 *   server refuses: bad credentials or an unknown role (class 28) and a database that
 *   does not exist (3D000) — retrying cannot help, the configuration must change; and a
 *   write that would move a session's `updated_at` past year 9999 (23514 on schema
 *   version 12's `sessions_updated_at_range`);
 * - `too_large`: program limits (class 54, e.g. a value over PostgreSQL's 1 GB field limit);
 * - `corrupt`: a missing table, function, column or schema (42P01, 42883, 42703, 3F000:
 *   the schema was dropped or altered behind the store — retrying cannot help), and any
 *   other SQLSTATE (e.g. 42501 permission denied, XX000 internal error): not retryable,
 *   an operator must look; the message names the SQLSTATE.
 */
export function driverErrorCode(e: unknown): ErrorCode {
  const code = sqlState(e);
  // pg parses the connection string on connect (and redacts it in the error).
  if ((e as { code?: unknown } | null)?.code === 'ERR_INVALID_URL') return 'invalid_argument';
  if (code === '' || isConnectionError(e)) return 'unavailable';
  if (isRetryableTxError(e)) return 'unavailable';
  // lock_timeout expired; idle_in_transaction_session_timeout ended the session.
  if (code === '55P03' || code === '25P03') return 'unavailable';
  const cls = code.slice(0, 2);
  if (cls === '08' || cls === '57' || cls === '53' || cls === '58') return 'unavailable';
  if (cls === '22' || cls === '28' || code === '3D000') return 'invalid_argument';
  if (isUpdatedAtPastRange(e)) return 'invalid_argument';
  if (cls === '54') return 'too_large';
  return 'corrupt';
}

/**
 * Wraps a driver error in a `SessionKitError` with the driver error as `cause` (see
 * `driverErrorCode` for the mapping). The message names what was being done, the
 * SQLSTATE and the server's message (which never holds credentials); the connection
 * string is never part of it. `schema` names the store's schema in the message of a
 * missing-object error.
 */
export function wrapDriverError(e: unknown, doing: string, schema?: string): SessionKitError {
  if (isSessionKitError(e)) return e;
  const message = e instanceof Error ? e.message : String(e);
  const code = sqlState(e);
  const kind = driverErrorCode(e);
  const state = code ? `${code}: ` : '';
  if (kind === 'unavailable') {
    if (isRetryableTxError(e)) {
      return errors.unavailable(
        `${doing}: PostgreSQL kept aborting the transaction under contention after retries (${state}${message}); nothing was written`,
        e,
      );
    }
    if (code === '' || isConnectionError(e)) {
      return errors.unavailable(`${doing}: cannot reach PostgreSQL (${state}${message})`, e);
    }
    return errors.unavailable(`${doing}: PostgreSQL is not serving (${state}${message})`, e);
  }
  if (kind === 'invalid_argument' && code === '') {
    return errors.make(
      'invalid_argument',
      `${doing}: the connection string is not a valid URL (${message})`,
      { cause: e },
    );
  }
  if (classOf(code) === '28' || code === '3D000') {
    return errors.make(
      'invalid_argument',
      `${doing}: PostgreSQL refused the connection settings (${state}${message}) — check the user, password and database name`,
      { cause: e },
    );
  }
  if (isUpdatedAtPastRange(e)) {
    return errors.make(
      'invalid_argument',
      `${doing}: the session was last written at the latest date a store keeps (9999-12-31T23:59:59.999Z): a write must move updatedAt past it, so none can — nothing was written`,
      { cause: e },
    );
  }
  if (kind === 'invalid_argument') {
    return errors.make(
      'invalid_argument',
      `${doing}: PostgreSQL rejected a value (${state}${message})`,
      {
        cause: e,
      },
    );
  }
  if (kind === 'too_large') {
    return errors.make('too_large', `${doing}: over a PostgreSQL limit (${state}${message})`, {
      cause: e,
    });
  }
  if (MISSING_OBJECT.has(code)) {
    const where = schema === undefined ? 'the sessionkit schema' : `schema "${schema}"`;
    return errors.make(
      'corrupt',
      `${doing}: ${where} is missing a table, function or column (${state}${message}) — it was dropped or altered behind the store; reopen the store (or call migrate() on a new store) to recreate it, or restore it from a backup`,
      { cause: e },
    );
  }
  return errors.make('corrupt', `${doing}: unexpected PostgreSQL error (${state}${message})`, {
    cause: e,
  });
}
