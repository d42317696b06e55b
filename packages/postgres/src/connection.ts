// Connection plumbing shared by the transaction runner (transaction.ts) and the migration
// runner (migrations/runner.ts): which errors mean the connection is gone, and a
// checked-out client that records the 'error' it emits so it is discarded, not reused.
import type { Pool, PoolClient } from 'pg';

const NETWORK_ERRNOS = [
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
];

/** True for errors that mean the connection itself is gone (the client must be discarded). */
export function isConnectionError(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03')
    return true;
  if (NETWORK_ERRNOS.includes(code)) return true;
  const message = typeof err.message === 'string' ? err.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable|ended unexpectedly/i.test(
    message,
  );
}

/** A client checked out of the pool, with what broke it (if anything). */
export interface BorrowedClient {
  readonly client: PoolClient;
  /** Records that the client must not go back to the pool (the first reason is kept). */
  discard(e: unknown): void;
  /** Returns the client to the pool, or destroys it when it was discarded. Call once. */
  release(): void;
}

/**
 * Checks a client out of `pool` (the driver's connect error is thrown as it is). A
 * checked-out client has no pool listener: an error it emits between or during statements
 * (server shutdown, terminated backend, reset socket) would be an unhandled 'error' event
 * and kill the process. The borrowed client records it instead and is discarded on release.
 */
export async function borrowClient(pool: Pool): Promise<BorrowedClient> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onClientError = (err: Error) => {
    broken ??= err;
  };
  client.on('error', onClientError);
  return {
    client,
    discard(e) {
      broken ??= e instanceof Error ? e : new Error(String(e));
    },
    release() {
      client.removeListener('error', onClientError);
      client.release(broken);
    },
  };
}
