// One store's writes of one session, one at a time: with optimistic writes (a version
// check, a conditional PUT), concurrent writes of one process would race each other and
// the first answered would win every round; queued, only other processes race, fairly.
import type { ErrorFactory } from '../errors.js';
import { KeyedMutex } from '../helpers/keyed-mutex.js';

/**
 * The longest a write waits behind the same store's earlier writes of its session before
 * `unavailable` (a safety net: each write takes a round trip or a few, so a queue this slow
 * means the backend is not answering).
 */
export const SESSION_QUEUE_TIMEOUT_MS = 60_000;

/**
 * How long a write in flight — begun, with the session's index entry possibly not yet
 * updated — is trusted to finish: a reader meeting such an entry within this time waits for
 * or works around the write; after it, the write is taken as abandoned (its process died)
 * and `repair()` or the next reader settles the entry from the authoritative data.
 */
export const IN_FLIGHT_WRITE_GRACE_MS = 60_000;

/** First-come, first-served writes per session id within one store. */
export class SessionWriteQueue {
  readonly #mutex = new KeyedMutex();
  readonly #errors: ErrorFactory;
  readonly #timeoutMs: number;

  /** A queue whose waits give up after `timeoutMs` (default `SESSION_QUEUE_TIMEOUT_MS`). */
  constructor(errors: ErrorFactory, timeoutMs: number = SESSION_QUEUE_TIMEOUT_MS) {
    this.#errors = errors;
    this.#timeoutMs = timeoutMs;
  }

  /** Whether a write of `sessionId` is running or queued. */
  isBusy(sessionId: string): boolean {
    return this.#mutex.isHeld(sessionId);
  }

  /**
   * Runs `write` after this store's earlier writes of `sessionId` have finished (however
   * they ended). Rejects with `unavailable` (retryable; `write` not run) after waiting
   * longer than the timeout.
   */
  run<T>(sessionId: string, write: () => Promise<T>): Promise<T> {
    return this.#mutex.run(
      sessionId,
      this.#timeoutMs,
      () =>
        this.#errors.unavailable(
          `writing session "${sessionId}": waited ${Math.round(this.#timeoutMs / 1000)} s behind this store's earlier writes of it`,
        ),
      write,
    );
  }
}
