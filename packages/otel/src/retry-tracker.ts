// Which calls are retries. A store cannot say that a call repeats an earlier one, so the
// wrapper infers it from what it saw: a call is a retry when the previous call of the same
// method on the same session, through the same wrapper, failed with a code that asks the
// caller to try again (`conflict`: reload and retry; `unavailable`: safe to retry). That
// is what commitTurn's load/modify/save fallback does after a lost race, and what an
// application does after `unavailable`.

/** Failure codes after which the next call of the same method and session is a retry. */
export const RETRIED_CODES: ReadonlySet<string> = new Set(['conflict', 'unavailable']);

/** Failed calls remembered at most, oldest forgotten first (sessions that never retry). */
export const MAX_PENDING_RETRIES = 1024;

/** Remembers failed calls that a next call would retry. */
export class RetryTracker {
  /** `method \0 session` → the code the call failed with, in insertion order. */
  readonly #pending = new Map<string, string>();

  /** True when some failed call waits for its retry (`take` is worth calling). */
  get hasPending(): boolean {
    return this.#pending.size > 0;
  }

  /**
   * Called when a call starts: the code of the failure it retries, or `undefined`. The
   * failure is forgotten, so of concurrent calls after one failure only one is its retry.
   */
  take(method: string, session: unknown): string | undefined {
    const key = keyOf(method, session);
    const code = this.#pending.get(key);
    if (code !== undefined) this.#pending.delete(key);
    return code;
  }

  /** Called when a call failed with one of `RETRIED_CODES`: its next call is a retry. */
  failed(method: string, session: unknown, code: string): void {
    const key = keyOf(method, session);
    this.#pending.delete(key);
    this.#pending.set(key, code);
    if (this.#pending.size > MAX_PENDING_RETRIES) {
      const oldest = this.#pending.keys().next();
      if (!oldest.done) this.#pending.delete(oldest.value);
    }
  }
}

/** Only a string names a session here; anything else (bad input, no session) keys by method. */
function keyOf(method: string, session: unknown): string {
  return typeof session === 'string' ? `${method}\u0000${session}` : method;
}
