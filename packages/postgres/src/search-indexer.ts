// Search indexing off the turn: a write leaves its search text in `search_pending` (one heap
// row and one B-tree entry, no trigram work); this indexer takes pending rows in batches
// shortly afterwards and writes them as chunks and block words (search-index-plan.ts). It
// never locks a session row, and takes pending rows with SKIP LOCKED, so it never waits on
// a turn and no turn waits on it; a row whose session replaced its history meanwhile
// carries an old epoch and is dropped. Search reads pending rows too, so it is exact at
// every instant; only its speed depends on the indexer keeping up.
import type { StoreContext } from './context.js';
import { blockKey, blockOf, planIndex } from './search-index-plan.js';
import { pendingTextsOf, readBlockWords, writeIndexPlan } from './search-index-writes.js';
import { SEARCH_SCOPES, type SearchScope } from './search-scope.js';
import { queryOn } from './transaction.js';

/** How a pass commits (see `#pass`). */
const INDEX_PASS_TX = { asyncCommit: true } as const;

/** Pending rows one transaction takes. */
const TAKE_ROWS = 2000;

/** Blocks whose words the indexer remembers (least recently used forgotten first). */
const REMEMBERED_BLOCKS = 512;

/**
 * Takes pending search rows into the index: `noteWrite()` after a write that left pending
 * rows schedules a pass `delayMs` later (one at a time; the timer never keeps the process
 * alive); `drain()` takes everything now. Any store on the schema takes any session's
 * rows, so rows left by a process that exited are taken by the next writer. It remembers
 * the words of the blocks it wrote last, so a busy session's next turn costs only its new
 * words; what it does not remember it reads back once.
 */
export class SearchIndexer {
  readonly #ctx: StoreContext;
  readonly #delayMs: number;
  readonly #blocks = new Map<string, Set<string>>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  #closed = false;
  /** Called after each pass with the pending rows it took (table upkeep). */
  onTaken: (rows: number, wordsRows: number) => void = () => {};

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
   * Takes every pending row no other transaction holds into the index; returns how many
   * rows it took. Waits for a pass already running first. Throws what the statements
   * throw (`unavailable` …).
   */
  async drain(): Promise<number> {
    while (this.#running !== undefined) await this.#running.catch(() => 0);
    this.#running = this.#takeAll();
    try {
      return await this.#running;
    } finally {
      this.#running = undefined;
    }
  }

  /**
   * Forgets the words it remembers of every block: what it remembers must be in the
   * database, and a pass's commit does not wait for the disk (`#pass`), so a server crash
   * may undo a pass whose words it learned. A crash ends every connection: the store calls
   * this for each new one its pool opens, before any statement runs on it, so no pass after
   * a crash plans from words the crash took away (it reads them back once instead).
   */
  forgetBlocks(): void {
    this.#blocks.clear();
  }

  /**
   * Stops scheduling. A pass already running is not awaited: it is one transaction that
   * commits or rolls back on its own (an owned pool's end fails it harmlessly), and
   * waiting could hang `close()` on a connection that never comes.
   */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #takeAll(): Promise<number> {
    let taken = 0;
    for (;;) {
      const n = await this.#passInScope();
      taken += n;
      if (n < TAKE_ROWS) return taken;
    }
  }

  /**
   * `#pass`, again under the recorded scope when it failed on a schema without chunk
   * storage: another store changed the schema's scope away from `messages` since this one
   * migrated (search-chunks-table.ts), so this store follows it from now on, its turns
   * included (they then write no message text), instead of failing every pass while its
   * message rows pile up pending.
   */
  async #passInScope(): Promise<number> {
    try {
      return await this.#pass();
    } catch (e) {
      if (this.#ctx.search.scope !== 'messages' || !isNoChunkStorage(e)) throw e;
      const r = await this.#ctx.db.query(this.#ctx.statements.search.recordedScope, [], {
        doing: 'search index',
      });
      const v = r.rows[0]?.value as SearchScope | undefined;
      const scope = v !== undefined && SEARCH_SCOPES.includes(v) ? v : 'messages';
      if (scope === 'messages') throw e;
      this.#ctx.search.scope = scope;
      return this.#pass();
    }
  }

  /**
   * One transaction: take up to TAKE_ROWS pending rows, write their chunks and new words.
   * Its commit does not wait for the disk (`asyncCommit`): a turn's commit would otherwise
   * queue behind the pass's WAL flush, and a crash that undoes a pass loses nothing, as its
   * rows are then pending again (searched, taken by the next pass).
   */
  async #pass(): Promise<number> {
    const ctx = this.#ctx;
    const s = ctx.statements.s;
    const done = await ctx.db.tx(
      'search index',
      async (c) => {
        const r = await queryOn(c, ctx.statements.search.takePending, [TAKE_ROWS]);
        // A scope without message search has nowhere to put message text (its
        // search_chunks has no storage): such rows, left by a store of the old scope, go.
        const keep = ctx.search.scope === 'messages' ? () => true : (seq: number) => seq < 0;
        const rows = pendingTextsOf(r.rows.filter((row) => row.owned && keep(row.seq)));
        const unknown = new Map<string, { sessionId: string; epoch: string; block: number }>();
        for (const row of rows) {
          const block = blockOf(row.seq);
          const key = blockKey(row.sessionId, row.epoch, block);
          if (block >= 0 && !this.#blocks.has(key)) unknown.set(key, { ...row, block });
        }
        const read = await readBlockWords(c, s, [...unknown.values()]);
        const plan = planIndex(rows, (key) => this.#blocks.get(key) ?? read.get(key));
        await writeIndexPlan(c, s, plan);
        return { taken: r.rows.length, moved: rows.length, read, plan };
      },
      INDEX_PASS_TX,
    );
    // Committed: what the blocks now hold is known.
    for (const [key, words] of done.read) this.#remember(key, words);
    for (const [key, words] of done.plan.learned) {
      const held = this.#blocks.get(key) ?? new Set<string>();
      for (const w of words) held.add(w);
      this.#remember(key, held);
    }
    ctx.stats.searchRowsIndexed += done.moved;
    this.onTaken(done.taken, done.plan.words.length);
    return done.taken;
  }

  #remember(key: string, words: Set<string>): void {
    this.#blocks.delete(key);
    this.#blocks.set(key, words);
    while (this.#blocks.size > REMEMBERED_BLOCKS) {
      const oldest = this.#blocks.keys().next().value as string;
      this.#blocks.delete(oldest);
    }
  }
}

/** Whether `e` (a wrapped driver error) is an insert into `search_chunks` without storage: no partition for the row. */
function isNoChunkStorage(e: unknown): boolean {
  const cause = (e as { cause?: { code?: unknown } } | undefined)?.cause;
  return cause?.code === '23514';
}
