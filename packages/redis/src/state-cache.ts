// The last state this store saw of recently written sessions. Only a starting guess for a
// commit: the write script checks the session's life token and write version, so a stale
// entry (also one of a session deleted and created again since) costs one more round
// trip, never a wrong write.
import type { VersionedState } from './session-io.js';

/** Entries kept; the oldest are dropped first. */
const MAX_ENTRIES = 10_000;

export class StateCache {
  readonly #entries = new Map<string, VersionedState>();

  get(id: string): VersionedState | undefined {
    return this.#entries.get(id);
  }

  set(id: string, state: VersionedState): void {
    this.#entries.delete(id);
    this.#entries.set(id, state);
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  delete(id: string): void {
    this.#entries.delete(id);
  }

  clear(): void {
    this.#entries.clear();
  }
}
