// What every part of the store works with: the client, the key layout and the options.

import type { KeyedMutex } from '@sessionkit/core/adapter';
import type { CallWatch } from './calls.js';
import { errors } from './errors.js';
import type { IndexBatcher } from './index-batcher.js';
import type { KeySpace } from './keys.js';
import type { RedisClient } from './scripts.js';

/** The shared state of one store instance. */
export interface StoreContext {
  readonly client: RedisClient;
  /** The store's commands in flight, so none is left unsettled (`calls.ts`). */
  readonly calls: CallWatch;
  readonly keys: KeySpace;
  /** TTL of a session in ms after its last write; 0 for none. */
  readonly ttlMs: number;
  /**
   * True on Redis Cluster: cross-slot steps (the session, then the index) run as separate
   * scripts. On standalone Redis the listing order is updated inside the session's script.
   */
  readonly cluster: boolean;
  /** Cluster only: coalesces the order-entry writes that follow session writes. */
  readonly orderWrites: IndexBatcher;
  /** Counters for tests and probes. */
  readonly stats: RedisStoreStats;
  /**
   * This store's retrying writes of a session (commit, merge into it, promotion), one at
   * a time in call order (`serialWrite`). A script writes only when the session is still
   * at the version its header was computed from, so concurrent writes of one process
   * would race: the first answered retries first and wins every round, and a writer at
   * the back can lose a hundred in a row. Queued, only other processes race, fairly.
   */
  readonly sessionWrites: KeyedMutex;
}

/**
 * The longest a write waits behind this store's other writes of the same session before
 * `unavailable` (a safety net: each takes a round trip or a few, so a queue this slow
 * means Redis is not answering).
 */
const WRITE_QUEUE_TIMEOUT_MS = 60_000;

/** Runs `write` of session `id` after this store's earlier writes of it (`sessionWrites`). */
export function serialWrite<T>(ctx: StoreContext, id: string, write: () => Promise<T>): Promise<T> {
  return ctx.sessionWrites.run(
    id,
    WRITE_QUEUE_TIMEOUT_MS,
    () => errors.unavailable(`writing session "${id}": waited too long behind this store's writes`),
    write,
  );
}

/** Counters a store keeps for tests and probes. */
export interface RedisStoreStats {
  /** Reads of message bodies (load, windows, branch, clone, merge, save); listing never adds. */
  messageBodyReads: number;
  /** Order entries a listing found out of step with their session and corrected. */
  indexHeals: number;
}
