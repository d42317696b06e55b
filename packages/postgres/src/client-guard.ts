// Keeps a checked-out client from crashing the process. node-postgres emits 'error' on a
// client whose connection fails while no query runs on it. The pool listens while the
// client is idle and removes its listener when it hands the client out; when the server
// terminates a backend right after the client connected (pg_terminate_backend, 57P01),
// the termination can arrive in the same read as the end of the handshake and be emitted
// synchronously — before the caller of `pool.connect()` could attach a listener — and an
// 'error' event without a listener kills the process.
//
// The guard listens on the pool's 'acquire' event, which the pool emits synchronously
// before it removes its idle listener, and adds a listener to the client; the pool's
// 'release' event, emitted after the idle listener is back, removes it. So no client the
// pool hands out is ever without a listener. An owned pool also gives every new client a
// permanent listener at 'connect'. The listener only absorbs the event: node-postgres
// has already marked the client unusable, the pending query (if any) fails with the
// error, and the pool discards the client when it is released.
import type { Pool, PoolClient } from 'pg';

/** Absorbs a client's 'error' event (see the file comment). */
function absorbClientError(_err: Error): void {}

function addGuard(client: PoolClient): void {
  if (!client.listeners('error').includes(absorbClientError)) {
    client.on('error', absorbClientError);
  }
}

function removeGuard(_err: unknown, client: PoolClient): void {
  client.removeListener('error', absorbClientError);
}

// One pair of listeners per pool however many stores share it.
const guarded = new WeakMap<Pool, { stores: number }>();

/**
 * Guards every client `pool` hands out from now on (see the file comment) and returns the
 * function that stops guarding (call it once, at `close()`; the listeners go when the
 * last store on the pool closes). `owned`: the store owns the pool, and new clients get a
 * permanent listener too.
 */
export function guardPool(pool: Pool, owned: boolean): () => void {
  let entry = guarded.get(pool);
  if (!entry) {
    entry = { stores: 0 };
    guarded.set(pool, entry);
    pool.on('acquire', addGuard);
    pool.on('release', removeGuard);
  }
  if (owned) pool.on('connect', addGuard);
  entry.stores++;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const e = guarded.get(pool);
    if (!e) return;
    e.stores--;
    if (e.stores > 0) return;
    guarded.delete(pool);
    pool.removeListener('acquire', addGuard);
    pool.removeListener('release', removeGuard);
  };
}
