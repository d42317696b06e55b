// Planner statistics and the pending queue's dead rows, kept by the store itself when
// autovacuum is off on the server (PostgreSQL then never analyzes or vacuums a table on
// its own). Without statistics a table that grew from empty looks empty to the planner:
// `list` of 20 of 10,000 sessions sorted the whole table (11.9 ms instead of 0.3 ms), and
// every search scanned the queue's dead rows. With autovacuum on, this does nothing.
import { performance } from 'node:perf_hooks';
import type { StoreContext } from './context.js';

/** Changes to a table before it is analyzed again: autovacuum's rule (50 + 10 %), at least 500. */
const ANALYZE_BASE = 500;
const ANALYZE_FRACTION = 0.1;

/**
 * Pending rows the indexer deletes before the queue is vacuumed while turns keep coming.
 * A VACUUM of the queue costs ~10 ms whatever it frees, several turns' worth of server
 * time, so under load it runs rarely; the space it frees is reused by later turns.
 */
const VACUUM_PENDING_EVERY = 5000;

/** How long after a change the store looks (one look at a time; the timer never keeps the process alive). */
const UPKEEP_DELAY_MS = 1000;

/** The tables whose statistics the store keeps, and the changes it saw since their last ANALYZE. */
type Tracked = 'sessions' | 'search_words';

/**
 * Counts the rows the store adds and the pending rows its indexer deletes, and when
 * autovacuum is off runs `ANALYZE` on a table that changed by 10 % since its last
 * statistics (as autovacuum would) and `VACUUM` on `search_pending` every 5,000 rows taken
 * and once the store is idle after taking any (`#vacuumPending`).
 * Failures are ignored: this only keeps plans and the queue lean, never correctness.
 */
export class TableUpkeep {
  readonly #ctx: StoreContext;
  readonly #changed: Record<Tracked, number> = { sessions: 0, search_words: 0 };
  readonly #rowsAtAnalyze: Record<Tracked, number | undefined> = {
    sessions: undefined,
    search_words: undefined,
  };
  #pendingTaken = 0;
  /** When the indexer last took pending rows (`performance.now()`). */
  #lastTaken = 0;
  #autovacuum: boolean | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #closed = false;

  constructor(ctx: StoreContext) {
    this.#ctx = ctx;
  }

  /** `n` sessions were created or deleted. */
  noteSessions(n: number): void {
    this.#changed.sessions += n;
    this.#schedule();
  }

  /** The indexer deleted `taken` pending rows and wrote `wordsRows` words rows. */
  noteIndexed(taken: number, wordsRows: number): void {
    this.#pendingTaken += taken;
    if (taken > 0) this.#lastTaken = performance.now();
    this.#changed.search_words += wordsRows;
    this.#schedule();
  }

  /** Stops scheduling. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Looks now: what `noteSessions`/`noteIndexed` schedule. */
  async run(): Promise<void> {
    const db = this.#ctx.db;
    const s = this.#ctx.statements.s;
    const doing = { doing: 'table upkeep' };
    this.#autovacuum ??= (
      await db.query(this.#ctx.statements.maintenance.autovacuumOn, [], doing)
    ).rows[0]?.on;
    if (this.#autovacuum !== false) return;
    for (const table of ['sessions', 'search_words'] as const) {
      if (this.#rowsAtAnalyze[table] === undefined) {
        const r = await db.query(this.#ctx.statements.maintenance.tableRows, [table], doing);
        // Never analyzed (-1): the first change is enough.
        this.#rowsAtAnalyze[table] = Math.max(0, Number(r.rows[0]?.n ?? 0));
        if (Number(r.rows[0]?.n ?? -1) < 0) this.#changed[table] += ANALYZE_BASE;
      }
      const due = ANALYZE_BASE + ANALYZE_FRACTION * (this.#rowsAtAnalyze[table] ?? 0);
      if (this.#changed[table] < due) continue;
      this.#changed[table] = 0;
      await db.query({ text: `ANALYZE ${s}.${table}` }, [], doing);
      const r = await db.query(this.#ctx.statements.maintenance.tableRows, [table], doing);
      this.#rowsAtAnalyze[table] = Math.max(0, Number(r.rows[0]?.n ?? 0));
    }
    await this.#vacuumPending();
  }

  /**
   * Vacuums `search_pending` every 5,000 rows taken while the store is busy (without
   * truncating it: that takes the table's exclusive lock, which a turn inserting its
   * pending row would wait for), and once it has been idle for `UPKEEP_DELAY_MS` after
   * taking any (then truncating the emptied file). A turn's pending row is ~2 KB kept in
   * its page, and a deleted row's space is reused only after a VACUUM: without the idle
   * one, the queue of a 200-turn conversation kept 0.52 MiB of dead rows, as much as its
   * messages, until 5,000 more rows came.
   */
  async #vacuumPending(): Promise<void> {
    const s = this.#ctx.statements.s;
    const doing = { doing: 'table upkeep' };
    if (this.#pendingTaken >= VACUUM_PENDING_EVERY) {
      this.#pendingTaken = 0;
      const text = `VACUUM (SKIP_LOCKED, TRUNCATE false) ${s}.search_pending`;
      await this.#ctx.db.query({ text }, [], doing);
    } else if (this.#pendingTaken > 0) {
      if (performance.now() - this.#lastTaken < UPKEEP_DELAY_MS) return this.#schedule();
      this.#pendingTaken = 0;
      await this.#ctx.db.query({ text: `VACUUM (SKIP_LOCKED) ${s}.search_pending` }, [], doing);
    }
  }

  #schedule(): void {
    if (this.#closed || this.#timer !== undefined || this.#autovacuum === true) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // A look still running re-schedules itself when it needs another.
      if (this.#running) return this.#schedule();
      this.#running = true;
      this.run()
        .catch(() => {})
        .finally(() => {
          this.#running = false;
        });
    }, UPKEEP_DELAY_MS);
    this.#timer.unref();
  }
}
