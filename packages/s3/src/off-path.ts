// Work a store starts and does not wait for before a call resolves: writes of derived data
// (search text) that readers rebuild when they find it missing, and a session's storage
// upkeep (folds, removal of superseded objects), which never holds an acknowledged
// version's only copy. `close()` waits for all of it.

/** Upkeep tasks running at once across a store's sessions (more wait their turn). */
export const UPKEEP_CONCURRENCY = 4;

/** One kind of upkeep of one session: the task running and the one waiting after it. */
interface Slot {
  running: boolean;
  waiting: (() => Promise<unknown>) | undefined;
}

/** The store's writes in flight off the callers' paths. */
export class OffPathWork {
  readonly #running = new Set<Promise<void>>();
  /** Upkeep by key (kind and session): at most one running and one waiting. */
  readonly #slots = new Map<string, Slot>();
  /** Keys whose waiting task waits for a free place, oldest first. */
  readonly #queue: string[] = [];
  #active = 0;

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

  /**
   * Runs `task` off the caller's path as the upkeep `key` (a kind and a session): while an
   * upkeep of that key runs, the newest one asked for waits and the older waiting ones are
   * dropped (each task judges the session as it finds it, so the newest covers them), and
   * at most `UPKEEP_CONCURRENCY` run at once. A failure is swallowed: upkeep that did not
   * happen is done by a later one.
   */
  startUpkeep(key: string, task: () => Promise<unknown>): void {
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      slot = { running: false, waiting: undefined };
      this.#slots.set(key, slot);
    }
    const queued = slot.waiting !== undefined;
    slot.waiting = task;
    if (!slot.running && !queued) this.#queue.push(key);
    this.#pump();
  }

  /** Resolves once every piece of work started so far (and any it started) has ended. */
  async settled(): Promise<void> {
    // Upkeep that ends starts the next (into `#running`) before its own entry goes.
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  /** Starts queued upkeep while places are free. */
  #pump(): void {
    while (this.#active < UPKEEP_CONCURRENCY && this.#queue.length > 0) {
      const key = this.#queue.shift() as string;
      const slot = this.#slots.get(key);
      const task = slot?.waiting;
      if (slot === undefined || task === undefined) continue;
      slot.waiting = undefined;
      slot.running = true;
      this.#active++;
      this.start(
        Promise.resolve()
          .then(task)
          .finally(() => {
            this.#active--;
            slot.running = false;
            if (slot.waiting !== undefined) this.#queue.push(key);
            else this.#slots.delete(key);
            this.#pump();
          }),
      );
    }
  }
}
