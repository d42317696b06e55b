// An in-process mutex per key (a session id): what serialises one store's calls on a
// session while its lock file is held across several of them (see `lease.ts`).

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout | undefined;
}

/** FIFO mutexes by key; a key's entry exists only while it is held. */
export class KeyedMutex {
  readonly #held = new Map<string, Waiter[]>();

  /** Whether `key` is held right now. */
  isHeld(key: string): boolean {
    return this.#held.has(key);
  }

  /**
   * Resolves once this caller holds `key` (at once when free; otherwise after the holders
   * before it, first come first served). Rejects with `onTimeout()` after `timeoutMs`.
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
}
