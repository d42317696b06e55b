// Search indexing off the turn's transaction: a turn writes its search rows to
// `search_pending` (no trigram index, one heap row and one B-tree entry); this indexer moves
// them into the indexed `search_rows` in batches shortly afterwards. Search reads both
// tables, so it is exact at every instant; only its speed depends on the indexer keeping up.
import type { StoreContext } from './context.js';

/** Sessions whose pending rows one statement moves. */
const SESSIONS_PER_PASS = 200;

/**
 * Moves pending search rows into the indexed table: `noteWrite()` after a write that left
 * pending rows schedules a pass `delayMs` later (one at a time; the timer never keeps the
 * process alive); `drain()` moves everything now. Any store on the schema moves any
 * session's rows, so rows left by a process that exited are moved by the next writer.
 */
export class SearchIndexer {
  readonly #ctx: StoreContext;
  readonly #delayMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  #closed = false;

  constructor(ctx: StoreContext, delayMs: number) {
    this.#ctx = ctx;
    this.#delayMs = delayMs;
  }

  /** Schedules a background pass unless one is already scheduled. */
  noteWrite(): void {
    if (this.#closed || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // A failed pass leaves the rows pending (still searched, still exact); the next
      // write schedules another. Errors are counted, not thrown: nobody awaits this.
      this.drain().catch(() => {
        this.#ctx.stats.searchIndexFailures++;
      });
    }, this.#delayMs);
    this.#timer.unref();
  }

  /**
   * Moves every pending row that is not being written right now into the indexed table;
   * returns how many moved. Waits for a pass already running first. Throws what the
   * statement throws (`unavailable` …).
   */
  async drain(): Promise<number> {
    while (this.#running !== undefined) await this.#running.catch(() => 0);
    this.#running = this.#moveAll();
    try {
      return await this.#running;
    } finally {
      this.#running = undefined;
    }
  }

  /**
   * Stops scheduling. A pass already running is not awaited: it is one statement that
   * commits or rolls back on its own (an owned pool's end fails it harmlessly), and
   * waiting could hang `close()` on a connection that never comes.
   */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #moveAll(): Promise<number> {
    const q = this.#ctx.statements.maintenance.indexPendingSearch;
    let moved = 0;
    for (;;) {
      const r = await this.#ctx.db.query(q, [SESSIONS_PER_PASS], { doing: 'search index' });
      const n = r.rows[0]?.n ?? 0;
      moved += n;
      this.#ctx.stats.searchRowsIndexed += n;
      // Fewer rows than sessions asked for is a cheap proxy for "nothing left" (a session
      // has at least one pending row): stop, the next write schedules again.
      if (n < SESSIONS_PER_PASS) break;
    }
    return moved;
  }
}
