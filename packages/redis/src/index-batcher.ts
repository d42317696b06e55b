// On a Cluster every write's order and filter entries are a second step on the index slot,
// which all sessions share. Writes that finish while an index update is in flight are
// coalesced into the next one: each caller still waits until its own entries are written,
// but the index node sees one script per round instead of one per write.
import { type CallContext, call } from './calls.js';
import type { KeySpace } from './keys.js';
import { SCRIPTS } from './lua/index.js';

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

/** What one session's queued index step does. */
interface QueuedEntry {
  score: number;
  /** Filter indexes the entry moves forward in. */
  joined: Set<string>;
  /** Filter indexes the entry leaves (unless a later write put it back there). */
  left: Set<string>;
}

/** Entries sent in one script at most. */
const MAX_BATCH = 256;

export class IndexBatcher {
  /** Per id, what its latest write asks of the index (a later write of a session supersedes). */
  #queued = new Map<string, QueuedEntry>();
  #waiters: Waiter[] = [];
  #running = false;

  constructor(private readonly ctx: CallContext & { keys: KeySpace }) {}

  /**
   * Moves the order entry of `id` and its entries in `joined` forward to `score` (never
   * back) and takes it out of `left`; resolves once written.
   */
  set(
    id: string,
    score: number,
    joined: readonly string[] = [],
    left: readonly string[] = [],
  ): Promise<void> {
    this.#queue(id, score, joined, left);
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (!this.#running) void this.#drain();
    return done;
  }

  #queue(id: string, score: number, joined: readonly string[], left: readonly string[]): void {
    const queued = this.#queued.get(id);
    if (queued === undefined) {
      this.#queued.set(id, { score, joined: new Set(joined), left: new Set(left) });
      return;
    }
    // Merged in write order: the later write's indexes are the session's; every index an
    // earlier one joined or left and the later one does not hold is left.
    const [earlier, later] =
      queued.score <= score
        ? [queued, { score, joined: new Set(joined), left: new Set(left) }]
        : [{ score, joined: new Set(joined), left: new Set(left) }, queued];
    for (const key of [...earlier.joined, ...earlier.left]) {
      if (!later.joined.has(key)) later.left.add(key);
    }
    this.#queued.set(id, later);
  }

  async #drain(): Promise<void> {
    this.#running = true;
    while (this.#queued.size > 0) {
      const entries = [...this.#queued].slice(0, MAX_BATCH);
      for (const [id] of entries) this.#queued.delete(id);
      // Waiters whose entries are all in this batch or earlier ones: everyone queued so far
      // unless the batch was cut at MAX_BATCH (then the rest wait for the next round).
      const waiters = this.#queued.size === 0 ? this.#waiters.splice(0) : [];
      const { keys, args } = scriptInput(this.ctx.keys.order, entries);
      try {
        await call(this.ctx, SCRIPTS.indexSetMany, keys, args, 'indexing a session');
        for (const w of waiters) w.resolve();
      } catch (error) {
        for (const w of waiters.length > 0 ? waiters : this.#waiters.splice(0)) w.reject(error);
        this.#queued.clear();
      }
    }
    this.#running = false;
  }
}

/** The KEYS and ARGV of `INDEX_SET_MANY` for `entries`. */
function scriptInput(
  order: string,
  entries: readonly [string, QueuedEntry][],
): { keys: string[]; args: (string | number)[] } {
  const keys = [order];
  const position = new Map<string, number>();
  const at = (key: string): number => {
    let p = position.get(key);
    if (p === undefined) {
      p = keys.push(key);
      position.set(key, p);
    }
    return p;
  };
  const args: (string | number)[] = [];
  for (const [id, e] of entries) {
    args.push(e.score, id, e.joined.size, ...[...e.joined].map(at));
    args.push(e.left.size, ...[...e.left].map(at));
  }
  return { keys, args };
}
