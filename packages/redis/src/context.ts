// What every part of the store works with: the client, the key layout and the options.

import type { SessionWriteQueue } from '@sessionkit/core/adapter';
import type { CallWatch } from './calls.js';
import type { IndexBatcher } from './index-batcher.js';
import type { KeySpace } from './keys.js';
import type { ReplicaWait } from './replicas.js';
import type { RedisClient } from './scripts.js';
import type { StateCache } from './state-cache.js';

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
  /** `waitReplicas`: how a write waits for replicas before it resolves; `undefined`: it does not. */
  readonly replicaWait: ReplicaWait | undefined;
  /** Counters for tests and probes. */
  readonly stats: RedisStoreStats;
  /**
   * This store's retrying writes of a session (commit, save, merge into it, promotion),
   * one at a time in call order. A script writes only when the session is still at the
   * version its plan was made from, so concurrent writes of one process would race: the
   * first answered retries first and wins every round. Queued, only other processes race.
   */
  readonly sessionWrites: SessionWriteQueue;
  /** The last state this store saw of recently written sessions (a commit's first guess). */
  readonly cache: StateCache;
}

/** Counters a store keeps for tests and probes. */
export interface RedisStoreStats {
  /** Reads of message bodies (load, windows, branch, clone, merge, save); listing never adds. */
  messageBodyReads: number;
  /** Order entries a listing found out of step with their session and corrected. */
  indexHeals: number;
  /** Sessions whose summaries listings read (a page reads about its own size). */
  summaryReads: number;
}
