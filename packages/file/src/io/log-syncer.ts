// Where a log append's fdatasync runs (`sync: true`): as a blocking call on the event
// loop, or in libuv's thread pool.
//
// A thread-pool fdatasync costs a round trip: the request goes to a pool thread, and its
// completion wakes the event loop again. For a lone writer that round trip is pure
// latency (measured here: about a quarter of a lone writer's commit time), while nothing
// else of the store could use the loop meanwhile. With several commits in progress the
// pool is better: their fdatasyncs overlap, and the kernel merges their journal commits.
// So a commit syncs inline only while it is the store's only commit in progress and the
// store's recent fdatasyncs were fast (a slow or stalling disk must not stall the event
// loop on every commit: then the pool, with an inline fdatasync now and then to measure
// the disk again, see `sync`).

import { fdatasyncSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fdatasyncAsync } from './fs-helpers.js';

/** Weight of the newest duration in the running mean (1/8: a few slow calls move it). */
const MEAN_WEIGHT = 1 / 8;

/** How a `LogSyncer` syncs and measures (the real calls by default; tests inject others). */
export interface SyncCalls {
  inline: (fd: number) => void;
  pooled: (fd: number) => Promise<void>;
  now: () => number;
}

const realCalls: SyncCalls = {
  inline: fdatasyncSync,
  pooled: fdatasyncAsync,
  now: () => performance.now(),
};

/** One store's policy for its log appends' fdatasyncs. */
export class LogSyncer {
  readonly #inlineMaxMs: number;
  readonly #calls: SyncCalls;
  readonly #stats: { inlineSyncs: number };
  #commitsInProgress = 0;
  /** Running mean of recent fdatasync durations (ms), inline and pooled alike. */
  #meanMs = 0;

  /**
   * `inlineMaxMs`: the running mean of recent fdatasyncs under which a lone commit syncs
   * inline (0: never). `stats.inlineSyncs` counts the inline ones.
   */
  constructor(inlineMaxMs: number, stats: { inlineSyncs: number }, calls = realCalls) {
    this.#inlineMaxMs = inlineMaxMs;
    this.#stats = stats;
    this.#calls = calls;
  }

  /** Runs `fn` (one commit) counted as in progress: others then sync through the pool. */
  async whileCommitting<T>(fn: () => Promise<T>): Promise<T> {
    this.#commitsInProgress++;
    try {
      return await fn();
    } finally {
      this.#commitsInProgress--;
    }
  }

  /**
   * fdatasyncs `fd`: inline when at most one commit is in progress (the caller's) and
   * recent fdatasyncs averaged under the limit, else in the thread pool. The promise
   * rejects with what fdatasync threw (an inline call's error too, never thrown).
   *
   * A pooled fdatasync counts as at most half the limit: its duration includes the thread
   * pool's round trip (a pool thread and then the event loop waiting to be scheduled),
   * which on a busy machine alone exceeds the limit, so counted whole it would keep a
   * lone writer in the pool, paying that round trip on every commit, long after the
   * disk is fast again. A disk that is really slow is measured again by the next inline
   * fdatasync once the pooled ones have brought the mean under the limit, and sends the
   * commits after it back to the pool.
   */
  sync(fd: number): Promise<void> {
    const start = this.#calls.now();
    if (this.#commitsInProgress <= 1 && this.#meanMs < this.#inlineMaxMs) {
      try {
        this.#calls.inline(fd);
      } catch (e) {
        return Promise.reject(e);
      }
      this.#stats.inlineSyncs++;
      this.#observe(this.#calls.now() - start);
      return Promise.resolve();
    }
    return this.#calls
      .pooled(fd)
      .then(() => this.#observe(Math.min(this.#calls.now() - start, this.#inlineMaxMs / 2)));
  }

  #observe(ms: number): void {
    this.#meanMs += (ms - this.#meanMs) * MEAN_WEIGHT;
  }
}
