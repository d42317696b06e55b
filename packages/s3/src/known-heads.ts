// The newest versions a store remembers of the sessions it wrote or read last, bounded.
import type { Current } from './session-log.js';

/** How many sessions' versions a store remembers at most. */
export const KNOWN_HEADS_LIMIT = 1024;

/**
 * A map of remembered versions by session id that forgets the least recently remembered
 * past `limit`: a store serving millions of sessions keeps only its recent ones (a
 * remembered version is used only while it is a few seconds old, see `attemptChange`).
 */
export class KnownHeads {
  readonly #heads = new Map<string, Current>();

  constructor(readonly limit: number = KNOWN_HEADS_LIMIT) {}

  get(id: string): Current | undefined {
    return this.#heads.get(id);
  }

  /** Remembers `current` as the newest of `id`, forgetting the oldest past the limit. */
  set(id: string, current: Current): void {
    // Deleted first so that the map's order is the order of remembering.
    this.#heads.delete(id);
    this.#heads.set(id, current);
    if (this.#heads.size > this.limit) {
      const oldest = this.#heads.keys().next().value as string;
      this.#heads.delete(oldest);
    }
  }

  delete(id: string): void {
    this.#heads.delete(id);
  }

  get size(): number {
    return this.#heads.size;
  }
}
