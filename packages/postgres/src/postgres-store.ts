import type {
  CommitInput,
  CommitResult,
  EventQuery,
  FullStore,
  JsonValue,
  ListOptions,
  Message,
  MessageWindow,
  MessageWindowQuery,
  RepairReport,
  RouterRow,
  Session,
  SessionEvent,
  SessionInput,
  SessionSummary,
} from '@sessionkit/core';
import {
  assertCommitInput,
  assertCount,
  assertEventType,
  assertFollowArgs,
  assertId,
  assertJsonValue,
  assertKnownKeys,
  assertLiveSessionId,
  assertMax,
  assertRouterTuple,
  assertSaveInput,
  normalizeEventQuery,
  normalizeLimit,
  normalizeListOptions,
  normalizeMessageWindow,
  prepareCreate,
  runtimeStatusText,
} from '@sessionkit/core/adapter';
import type { Pool } from 'pg';
import { copySession } from './branch-clone.js';
import { guardPool } from './client-guard.js';
import { commitTurn } from './commit.js';
import type { StoreContext, StoreStats } from './context.js';
import { errors, wrapDriverError } from './errors.js';
import { appendEvent, listEvents } from './events.js';
import { loadAllMessages, loadSession, loadWindow } from './history-reads.js';
import { assertSchemaName, DEFAULT_SCHEMA } from './identifiers.js';
import { deleteWithPromotions, mergeIntoParent } from './lineage-writes.js';
import { listSessions } from './listing.js';
import { migrate } from './migrations/runner.js';
import { repairAll } from './repair.js';
import { enforceMax } from './retention.js';
import * as router from './router.js';
import { loadStatus, saveStatus } from './runtime-status.js';
import { SearchIndexer } from './search-indexer.js';
import { assertSearchScope, type SearchScope } from './search-scope.js';
import { createSession, saveSession } from './session-writes.js';
import { statementsFor } from './statements/index.js';
import {
  assertPool,
  type PostgresStoreOptions,
  SETUP_OPTION_KEYS,
  type StoreSetupOptions,
} from './store-options.js';
import { TableUpkeep } from './table-upkeep.js';
import { TxRunner } from './transaction.js';

export { SEARCH_CHUNK, type SearchChunks, searchChunks, searchRowText } from './search-rows.js';
export type { MigrationProgress, ProgressListener, SearchScope } from './search-scope.js';
export type { PostgresStoreOptions, StoreSetupOptions } from './store-options.js';

// How long after a write the background indexer moves pending search rows.
const SEARCH_INDEX_DELAY_MS = 100;

// Marks a store created by `openPostgresStore`: its `close()` ends the pool.
const OWNS_POOL = Symbol('sessionkit.postgres.ownsPool');

/** @internal Options with the private ownership flag. */
export type InternalStoreOptions = PostgresStoreOptions & { [OWNS_POOL]?: boolean };

/** @internal Builds a store that owns `pool` (used by `openPostgresStore`). */
export function ownedStore<M>(pool: Pool, setup: StoreSetupOptions): PostgresStore<M> {
  const options: InternalStoreOptions = { ...setup, pool, [OWNS_POOL]: true };
  return new PostgresStore<M>(options);
}

/**
 * A sessionkit store on PostgreSQL (node-postgres): every capability, one row per
 * message, versioned migrations. This class checks the arguments (core's validators,
 * before any I/O), makes sure the schema is migrated, and delegates to one module per
 * role (see "Source layout" in the README).
 *
 * Guarantees: every write is one PostgreSQL transaction (a commit is one round trip to a
 * server-side function), so a resolved write is committed and a failed one left nothing
 * behind; `load` and `loadMessages` are one MVCC read (never torn, never waiting on a
 * writer); listing and search read only `sessions` and the search tables, never message
 * bodies; branch, clone and merge read the source inside their transaction under a row
 * lock; concurrent merges into one parent are serialised by the parent's row lock.
 *
 * Errors: `invalid_argument` before any I/O for bad input; `not_found`, `exists`,
 * `conflict`, `merge_diverged`, `too_large`, `corrupt` (stored JSON that does not parse)
 * as the contracts say; driver errors mapped by SQLSTATE (see `driverErrorCode` in
 * errors.ts): `unavailable` when PostgreSQL cannot be reached, is shutting down, out of
 * resources, or keeps deadlocking after the retries; `corrupt` when the schema's tables or
 * functions are missing or for an unexpected SQLSTATE (the driver error is the `cause`;
 * messages never carry credentials); `closed` after `close()`.
 */
export class PostgresStore<M = Message> implements FullStore<M> {
  /** The schema this store works in. */
  readonly schema: string;
  /**
   * Counters for tests and diagnostics. `messageBodyReads` grows by one for every
   * statement this store runs that reads rows of the `messages` table (load,
   * loadMessages and its windows, branch, clone, merge, save — which compares the stored
   * history with the new one —, repair); listing, search, commits and pruning never do. `txRetries` counts statements and transactions run again after a deadlock
   * or serialization failure (40P01/40001).
   */
  readonly stats: StoreStats = {
    messageBodyReads: 0,
    txRetries: 0,
    searchRowsIndexed: 0,
    searchIndexFailures: 0,
  };
  readonly #pool: Pool;
  readonly #ownsPool: boolean;
  readonly #ctx: StoreContext;
  readonly #indexer: SearchIndexer;
  readonly #upkeep: TableUpkeep;
  readonly #setup: StoreSetupOptions;
  readonly #unguard: () => void;
  #closed = false;
  #ready: Promise<void> | undefined;
  #ended: Promise<void> | undefined;

  /**
   * A store that borrows `options.pool` (its `close()` leaves the pool open). Nothing is
   * sent to the server until the first call, which creates and migrates the schema when
   * needed (use `PostgresStore.fromPool` to migrate eagerly).
   *
   * The pool should have an `'error'` listener, as node-postgres requires of every pool:
   * an idle client whose connection drops emits `'error'` on its pool. While the store is
   * open it listens to the pool's `'acquire'`/`'release'` events and gives every
   * checked-out client an `'error'` listener (see client-guard.ts), so a connection
   * terminated right after it was handed out never crashes the process.
   * Throws `invalid_argument` for a missing pool or a bad schema name.
   */
  constructor(options: PostgresStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw errors.invalid('PostgresStore: options must be an object');
    }
    assertKnownKeys(errors, options, ['pool', ...SETUP_OPTION_KEYS], 'PostgresStore');
    const pool = options.pool as Pool | undefined;
    assertPool(pool);
    const schema = options.schema ?? DEFAULT_SCHEMA;
    assertSchemaName(errors, schema);
    assertSearchScope(errors, options.search);
    if (
      options.onMigrationProgress !== undefined &&
      typeof options.onMigrationProgress !== 'function'
    ) {
      throw errors.invalid('PostgresStore: onMigrationProgress must be a function');
    }
    this.schema = schema;
    this.#pool = pool;
    this.#ownsPool = (options as InternalStoreOptions)[OWNS_POOL] === true;
    this.#setup = { search: options.search, onMigrationProgress: options.onMigrationProgress };
    this.#ctx = {
      db: new TxRunner(pool, schema, this.stats),
      statements: statementsFor(schema),
      stats: this.stats,
      search: { scope: options.search ?? 'messages', noteWrite: () => this.#indexer.noteWrite() },
      upkeep: { noteSessions: (n) => this.#upkeep.noteSessions(n) },
    };
    this.#indexer = new SearchIndexer(this.#ctx, SEARCH_INDEX_DELAY_MS);
    this.#upkeep = new TableUpkeep(this.#ctx);
    this.#indexer.onTaken = (taken, wordsRows) => this.#upkeep.noteIndexed(taken, wordsRows);
    this.#unguard = guardPool(pool, this.#ownsPool);
  }

  /**
   * A store borrowing `pool`, with the schema created and migrated before it resolves.
   * Throws `invalid_argument` (bad schema, refused credentials or database),
   * `unavailable` (PostgreSQL unreachable or not serving), `corrupt` (the migration failed
   * otherwise, e.g. `42501` permission denied: the message names the SQLSTATE).
   */
  static async fromPool<M = Message>(
    pool: Pool,
    options: StoreSetupOptions = {},
  ): Promise<PostgresStore<M>> {
    assertKnownKeys(errors, options, SETUP_OPTION_KEYS, 'PostgresStore.fromPool');
    const store = new PostgresStore<M>({ ...options, pool });
    await store.migrate();
    return store;
  }

  /**
   * Creates the schema and applies pending migrations now (otherwise the first call
   * does). Safe to call from many processes at once. Throws `unavailable`, `corrupt`
   * (e.g. permission denied), `closed`.
   */
  async migrate(): Promise<void> {
    this.#assertOpen();
    await this.#whenReady();
  }

  /**
   * What `list({ query })` searches in this store's schema (the `search` option): read
   * from the schema once the store is migrated; before that, the option (or `"messages"`).
   */
  get searchScope(): SearchScope {
    return this.#ctx.search.scope;
  }

  /**
   * Indexes the search text that writes left in `search_pending` now: its chunks and the
   * words of their blocks (the store does it by itself about 100 ms after a write; search
   * is exact either way, this only makes it faster). Returns how many pending rows it took;
   * rows another store's indexer holds at that instant are left to it. Throws
   * `unavailable`, `closed`.
   */
  async indexPendingSearch(): Promise<number> {
    this.#assertOpen();
    await this.#whenReady();
    return this.#indexer.drain();
  }

  // ---------------------------------------------------------------- Store

  /**
   * Stores a new session at revision 1 (one statement: header, message rows and search
   * rows) and returns it. Throws `exists`, `invalid_argument`, `unavailable`, `closed`.
   */
  async create(session: SessionInput<M>): Promise<Session<M>> {
    this.#assertOpen();
    const p = prepareCreate(errors, session as SessionInput<unknown>);
    await this.#whenReady();
    return (await createSession(this.#ctx, p)) as Session<M>;
  }

  /**
   * The full session with messages and children, read in one statement (one MVCC
   * snapshot, so header and history always agree). Throws `not_found`, `corrupt`,
   * `invalid_argument`, `unavailable`, `closed`.
   */
  async load(id: string): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, id);
    await this.#whenReady();
    return (await loadSession(this.#ctx, id)) as Session<M>;
  }

  /**
   * Replaces the stored session (header, history, search rows) in one transaction when
   * `session.revision` equals the stored revision. `children`, `parentId`,
   * `branchedAtTurn` and `createdAt` are kept as stored; absent optional fields are
   * cleared, absent counters are 0. The result has `revision + 1` and an `updatedAt`
   * strictly after the stored one. Throws `not_found`, `conflict`, `invalid_argument`,
   * `unavailable`, `closed`.
   */
  async save(session: Session<M>): Promise<Session<M>> {
    this.#assertOpen();
    assertSaveInput(errors, session);
    await this.#whenReady();
    return (await saveSession(this.#ctx, session as Session<unknown>)) as Session<M>;
  }

  /**
   * Removes the session with its messages, search rows, runtime status, events and
   * router bindings, and the follow targets pinning it, in one transaction; each child is
   * promoted by core's `promotedChild` (re-parented to the grandparent with a re-based
   * `branchedAtTurn` and merge base, or made a root), under row locks (see
   * `deleteWithPromotions`). A session whose parent does not exist is deleted like any
   * other. Throws `not_found`, `invalid_argument`, `unavailable`, `closed`.
   */
  async delete(id: string): Promise<void> {
    this.#assertOpen();
    assertId(errors, id);
    await this.#whenReady();
    const ctx = this.#ctx;
    const deleted = await ctx.db.tx('delete', (c) => deleteWithPromotions(c, ctx.statements, id));
    if (!deleted) throw errors.notFound(id);
  }

  /**
   * Summaries matching the filters in one statement over `sessions` (and the search tables
   * for `query`), never touching message bodies. Search is a case-insensitive literal
   * substring match of the lower-cased title or of one message's text (of the title only
   * under search scope `titles`). Throws `invalid_argument` (also for a `query` under
   * search scope `none`), `unavailable`, `closed`.
   */
  async list(options?: ListOptions): Promise<SessionSummary[]> {
    this.#assertOpen();
    const opts = normalizeListOptions(errors, options);
    await this.#whenReady();
    return listSessions(this.#ctx, opts);
  }

  /**
   * Marks the store closed (every later call fails with `closed`) and, for a store from
   * `openPostgresStore`, ends its pool. A borrowed pool is left open. Idempotent.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#indexer.close();
    this.#upkeep.close();
    if (!this.#ownsPool) {
      this.#unguard();
      return;
    }
    this.#ended ??= this.#pool
      .end()
      .catch(() => {})
      .finally(() => this.#unguard());
    await this.#ended;
  }

  // ---------------------------------------------------------------- Committer

  /**
   * Appends (or replaces) messages and applies the patch and increments in one round
   * trip: a server-side function that UPDATEs the session row guarded by the
   * expectations and INSERTs only the new message and search rows, so its cost does not
   * grow with the stored history. Throws `not_found`, `conflict`, `invalid_argument`,
   * `unavailable`, `closed`.
   */
  async commit(id: string, input: CommitInput<M>): Promise<CommitResult> {
    this.#assertOpen();
    assertId(errors, id);
    assertCommitInput(errors, id, input);
    await this.#whenReady();
    return commitTurn(this.#ctx, id, input as CommitInput<unknown>);
  }

  // ---------------------------------------------------------------- Brancher

  /**
   * A new session holding the parent's first `atTurn` messages, with the parent's title,
   * folder, model, provider, mode, counters and metadata (plus `branchedFrom`),
   * `parentId` and `branchedAtTurn` set. The parent is read in the same transaction
   * under a share lock (no concurrent commit slips in between reading its count and
   * copying its rows); the rows are copied inside PostgreSQL. Throws `not_found`,
   * `invalid_argument` (atTurn outside `0..messageCount`), `unavailable`, `closed`.
   */
  async branch(parentId: string, atTurn: number): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, parentId);
    assertCount(errors, atTurn, 'branch: atTurn');
    await this.#whenReady();
    return (await copySession(this.#ctx, 'branch', parentId, atTurn)) as Session<M>;
  }

  /**
   * An independent copy (fresh id, revision 1, no parent, not archived) with the full
   * history, counters, state and fields, `metadata.clonedFrom = id`, read and copied in
   * one transaction. Throws `not_found`, `invalid_argument`, `unavailable`, `closed`.
   */
  async clone(id: string): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, id);
    await this.#whenReady();
    return (await copySession(this.#ctx, 'clone', id, undefined)) as Session<M>;
  }

  /**
   * Fast-forwards the parent to the child's messages by core's merge rule (`planMerge`):
   * the parent keeps its own fields and its counters plus what the branch gained since it
   * started, `revision + 1`, `updatedAt` moved forward; the child is unchanged. One
   * transaction locks the parent (update) and then the child (share), so concurrent
   * merges into one parent run one after the other and the later one sees the moved
   * parent. Throws `merge_diverged` (nothing written) when the parent's history changed
   * after the branch point (more or fewer messages than `branchedAtTurn`, or rewritten
   * since the branch — its lineage says so without reading transcripts),
   * `invalid_argument` when the child has no parent or a merged counter would leave its
   * range, `not_found`, `unavailable`, `closed`.
   */
  async merge(childId: string): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, childId);
    await this.#whenReady();
    const ctx = this.#ctx;
    const merged = await ctx.db.tx('merge', (c) =>
      mergeIntoParent(c, ctx.statements, childId, () => {
        this.stats.messageBodyReads++;
      }),
    );
    return merged as Session<M>;
  }

  // ---------------------------------------------------------------- HistoryReader

  /**
   * The committed messages — all of them, or the window `{last: n}` / `{offset, limit}`
   * (see `loadMessageWindow`) — in one ordinary MVCC read: it neither waits on a turn's
   * row lock nor sees that turn before it commits. Caller-owned (freshly parsed JSON).
   * Throws `not_found`, `corrupt`, `invalid_argument` (bad id or window, before any I/O),
   * `unavailable`, `closed`.
   */
  async loadMessages(id: string, window?: MessageWindowQuery): Promise<M[]> {
    this.#assertOpen();
    assertId(errors, id);
    const normalized = normalizeMessageWindow(errors, window);
    await this.#whenReady();
    if (normalized.kind !== 'all') {
      return (await loadWindow(this.#ctx, id, normalized)).messages as M[];
    }
    return (await loadAllMessages(this.#ctx, id)) as M[];
  }

  /**
   * A window of the committed history (`{last: n}`, `{offset, limit}`, or all of it when
   * absent) with its absolute `offset`, the history's `messageCount` and the session's
   * `revision`, all read by one statement (one MVCC snapshot, never torn by a concurrent
   * commit or replace). The message rows are read by key range on `(session_id, seq)`, so
   * the cost grows with the window, not the history. A window past the end is empty. To
   * page backwards from `{last: n}`, ask for `{offset: max(0, offset − n), limit:
   * min(n, offset)}` and compare `revision`. Throws `not_found`, `corrupt`,
   * `invalid_argument` (bad id or window, before any I/O), `unavailable`, `closed`.
   */
  async loadMessageWindow(id: string, window?: MessageWindowQuery): Promise<MessageWindow<M>> {
    this.#assertOpen();
    assertId(errors, id);
    const normalized = normalizeMessageWindow(errors, window);
    await this.#whenReady();
    const w = await loadWindow(this.#ctx, id, normalized);
    return { ...w, messages: w.messages as M[] };
  }

  // ---------------------------------------------------------------- RuntimeStatusStore

  /**
   * Stores `status` in its own table (an upsert): transcript writes never touch it and
   * it never touches the transcript or the revision. Over `MAX_RUNTIME_STATUS_BYTES` of
   * UTF-8 JSON → `too_large`, nothing written. Throws `not_found`, `invalid_argument`,
   * `unavailable`, `closed`.
   */
  async saveRuntimeStatus(id: string, status: JsonValue): Promise<void> {
    this.#assertOpen();
    const text = runtimeStatusText(errors, id, status);
    await this.#whenReady();
    await saveStatus(this.#ctx, id, text);
  }

  /**
   * The stored status (freshly parsed), or `null` when none was saved. Throws
   * `not_found`, `corrupt`, `invalid_argument`, `unavailable`, `closed`.
   */
  async loadRuntimeStatus(id: string): Promise<JsonValue | null> {
    this.#assertOpen();
    assertId(errors, id);
    await this.#whenReady();
    return loadStatus(this.#ctx, id);
  }

  // ---------------------------------------------------------------- SessionRouter

  /**
   * Binds `(channel, chatKey, thread)` to an existing session, replacing any binding.
   * `channel` and `chatKey` must be non-empty; `thread` may be `""`. Binding times move
   * strictly forward across the store. Throws `not_found`, `invalid_argument`,
   * `unavailable`, `closed`.
   */
  async bind(channel: string, chatKey: string, thread: string, sessionId: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'bind', channel, chatKey, thread, true);
    assertId(errors, sessionId);
    await this.#whenReady();
    await router.bind(this.#ctx, channel, chatKey, thread, sessionId);
  }

  /**
   * The session for the tuple, or `""`, in one statement. A follow target of
   * `(channel, chatKey)` wins: `"tui"` gives `liveSessionId` (or the binding when it is
   * `""`), any other target gives that id. Throws `invalid_argument`, `unavailable`,
   * `closed`.
   */
  async resolve(
    channel: string,
    chatKey: string,
    thread: string,
    liveSessionId: string,
  ): Promise<string> {
    this.#assertOpen();
    assertRouterTuple(errors, 'resolve', channel, chatKey, thread);
    assertLiveSessionId(errors, liveSessionId);
    await this.#whenReady();
    return router.resolve(this.#ctx, channel, chatKey, thread, liveSessionId);
  }

  /** Removes the binding; a missing one is not an error. Throws `invalid_argument`, `unavailable`, `closed`. */
  async unbind(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'unbind', channel, chatKey, thread);
    await this.#whenReady();
    await router.unbind(this.#ctx, channel, chatKey, thread);
  }

  /**
   * Sets the follow target of `(channel, chatKey)`: `"tui"`, a session id (checked for
   * format only; the session need not exist), or `""` to clear. Empty channel →
   * `invalid_argument`. Throws `unavailable`, `closed`.
   */
  async follow(channel: string, chatKey: string, target: string): Promise<void> {
    this.#assertOpen();
    assertFollowArgs(errors, channel, chatKey, target);
    await this.#whenReady();
    await router.follow(this.#ctx, channel, chatKey, target);
  }

  /**
   * Moves the binding's `updatedAt` strictly forward (past every binding's); a missing
   * binding is not an error. Throws `invalid_argument`, `unavailable`, `closed`.
   */
  async touch(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'touch', channel, chatKey, thread);
    await this.#whenReady();
    await router.touch(this.#ctx, channel, chatKey, thread);
  }

  /**
   * Bindings, newest `updatedAt` first. `limit`: absent or 0 → 50, at most 1000.
   * Throws `invalid_argument`, `unavailable`, `closed`.
   */
  async recent(limit?: number): Promise<RouterRow[]> {
    this.#assertOpen();
    const n = normalizeLimit(errors, limit, 'recent: limit');
    await this.#whenReady();
    return router.recent(this.#ctx, n);
  }

  // ---------------------------------------------------------------- EventLog

  /**
   * Appends an event in one statement that bumps the session's event counter under its
   * row lock, so sequences are 1, 2, 3 … without gaps under any concurrency. `revision`
   * is the session's revision at that moment; `payload` defaults to `null`. Throws
   * `not_found`, `invalid_argument`, `unavailable`, `closed`.
   */
  async append(id: string, type: string, payload: JsonValue = null): Promise<SessionEvent> {
    this.#assertOpen();
    assertId(errors, id);
    assertEventType(errors, type);
    assertJsonValue(errors, payload, 'event payload');
    const text = JSON.stringify(payload);
    await this.#whenReady();
    return appendEvent(this.#ctx, id, type, text);
  }

  /**
   * Events after `query.afterSequence` (default 0), in order, at most `query.limit`
   * (default all), in one statement. Throws `not_found`, `corrupt`, `invalid_argument`,
   * `unavailable`, `closed`.
   */
  async events(id: string, query?: EventQuery): Promise<SessionEvent[]> {
    this.#assertOpen();
    assertId(errors, id);
    const { afterSequence, limit } = normalizeEventQuery(errors, query);
    await this.#whenReady();
    return listEvents(this.#ctx, id, afterSequence, limit);
  }

  // ---------------------------------------------------------------- Pruner

  /**
   * Keeps the newest `max` root sessions (`updatedAt` desc, then id desc, archived
   * included) and deletes the other roots in one statement: a server-side function that
   * selects and locks the victims, promotes their children to roots, drops follow pins
   * and deletes the rows (messages, status, events and bindings cascade). Sub-sessions
   * are never selected. `max <= 0` means unlimited. Returns how many were deleted.
   * Throws `invalid_argument`, `unavailable`, `closed`.
   */
  async enforceMax(max: number): Promise<number> {
    this.#assertOpen();
    assertMax(errors, max);
    if (max <= 0) return 0;
    await this.#whenReady();
    const deleted = await enforceMax(this.#ctx, max);
    this.#upkeep.noteSessions(deleted);
    return deleted;
  }

  // ---------------------------------------------------------------- Repairer

  /**
   * Rebuilds the derived data of every session from its authoritative rows: the
   * `message_count` column and the search data (title and message text), one session
   * at a time under its row lock, so it is safe while the store is in use. A session
   * whose stored JSON does not parse or whose message rows have gaps is reported in
   * `skippedCorrupt` and left untouched. `rebuilt` counts the sessions checked and
   * rebuilt; `indexEntriesFixed` the sessions whose derived data was wrong.
   * Reads every message body (unlike every other call but load). Throws `unavailable`,
   * `closed`.
   */
  async repair(): Promise<RepairReport> {
    this.#assertOpen();
    await this.#whenReady();
    const report = await repairAll(this.#ctx, () => this.#assertOpen());
    await this.#indexer.drain();
    return report;
  }

  // ---------------------------------------------------------------- internals

  #assertOpen(): void {
    if (this.#closed) throw errors.closed();
  }

  async #whenReady(): Promise<void> {
    this.#ready ??= migrate(this.#pool, this.schema, {
      search: this.#setup.search,
      onProgress: this.#setup.onMigrationProgress,
    }).then(
      (outcome) => {
        this.#ctx.search.scope = outcome.search;
        // Rows a process left pending when it exited: moved by a pass shortly.
        if (outcome.pending) this.#indexer.noteWrite();
      },
      (e: unknown) => {
        this.#ready = undefined;
        throw wrapDriverError(e, `migrating schema "${this.schema}"`, this.schema);
      },
    );
    await this.#ready;
  }
}
