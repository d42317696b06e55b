// On a Cluster every write's order entry is a second step on the index slot, which all
// sessions share. Writes that finish while an index update is in flight are coalesced
// into the next one: each caller still waits until its own entry is written, but the index
// node sees one script per round instead of one per write.
import { type CallContext, call } from './calls.js';
import type { KeySpace } from './keys.js';
import { SCRIPTS } from './lua/index.js';

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

/** Entries sent in one script at most. */
const MAX_BATCH = 256;

export class IndexBatcher {
  /** Latest score per id waiting to be written (a later write of a session supersedes). */
  #queued = new Map<string, number>();
  #waiters: Waiter[] = [];
  #running = false;

  constructor(private readonly ctx: CallContext & { keys: KeySpace }) {}

  /** Moves the order entry of `id` forward to `score` (never back); resolves once written. */
  set(id: string, score: number): Promise<void> {
    const queued = this.#queued.get(id);
    if (queued === undefined || queued < score) this.#queued.set(id, score);
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (!this.#running) void this.#drain();
    return done;
  }

  async #drain(): Promise<void> {
    this.#running = true;
    while (this.#queued.size > 0) {
      const entries = [...this.#queued].slice(0, MAX_BATCH);
      for (const [id] of entries) this.#queued.delete(id);
      // Waiters whose entries are all in this batch or earlier ones: everyone queued so far
      // unless the batch was cut at MAX_BATCH (then the rest wait for the next round).
      const waiters = this.#queued.size === 0 ? this.#waiters.splice(0) : [];
      try {
        await call(
          this.ctx,
          SCRIPTS.indexSetMany,
          [this.ctx.keys.order],
          entries.flatMap(([id, score]) => [score, id]),
          'indexing a session',
        );
        for (const w of waiters) w.resolve();
      } catch (error) {
        for (const w of waiters.length > 0 ? waiters : this.#waiters.splice(0)) w.reject(error);
        this.#queued.clear();
      }
    }
    this.#running = false;
  }
}
