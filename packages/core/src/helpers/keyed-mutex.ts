// An in-process mutex per key (a session id). Adapters use it to run one store's writes
// of a session one at a time: the file store while a lock file is held across several of
// them, the optimistic stores (Redis) so that writers of one process never race each
// other, which would let the first of them win every round and starve the rest.

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * FIFO mutexes by key: callers get a key in the order they asked for it. A key's entry
 * exists only while it is held, so the map holds no more keys than are in use.
 */
export class KeyedMutex {
  readonly #held = new Map<string, Waiter[]>();

  /** Whether `key` is held right now. */
  isHeld(key: string): boolean {
    return this.#held.has(key);
  }

  /**
   * Resolves once this caller holds `key` (at once when free; otherwise after the holders
   * before it, first come first served). Rejects with `onTimeout()` after `timeoutMs`
   * (the caller then does not hold it). Every acquire that resolved must be followed by
   * exactly one `release(key)`.
   */
  acquire(key: string, timeoutMs: number, onTimeout: () => unknown): Promise<void> {
    const queue = this.#held.get(key);
    if (!queue) {
      this.#held.set(key, []);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, timer: undefined };
      waiter.timer = setTimeout(() => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        reject(onTimeout());
      }, timeoutMs);
      queue.push(waiter);
    });
  }

  /** Hands `key` to the next waiter, or frees it. */
  release(key: string): void {
    const queue = this.#held.get(key);
    if (!queue) return;
    const next = queue.shift();
    if (!next) {
      this.#held.delete(key);
      return;
    }
    clearTimeout(next.timer);
    next.resolve();
  }

  /**
   * Runs `fn` holding `key` and releases it however `fn` ends. Rejects with `onTimeout()`
   * when `key` is not free within `timeoutMs` (then `fn` does not run).
   */
  async run<T>(key: string, timeoutMs: number, onTimeout: () => unknown, fn: () => Promise<T>) {
    await this.acquire(key, timeoutMs, onTimeout);
    try {
      return await fn();
    } finally {
      this.release(key);
    }
  }
}
