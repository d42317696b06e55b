// Work a store starts and does not wait for before a call resolves: writes of derived data
// (search text) that readers rebuild when they find it missing. `close()` waits for it.

/** The store's writes in flight off the callers' paths. */
export class OffPathWork {
  readonly #running = new Set<Promise<void>>();

  /**
   * Lets `work` run without the caller waiting. A failure is swallowed: what off-path work
   * writes is derived from the versions, and a reader that finds it missing rebuilds it.
   */
  start(work: Promise<unknown>): void {
    const running: Promise<void> = work
      .then(
        () => {},
        () => {},
      )
      .finally(() => this.#running.delete(running));
    this.#running.add(running);
  }

  /** Resolves once every piece of work started so far (and any it started) has ended. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }
}
