// The PostgreSQL store: the kit's base class over one schema. The base class checks and
// copies every argument, handles `closed`, `{ signal }` and readiness (the migration); each
// primitive here is one statement or one transaction of the role module it calls.
import type {
  CommitInput,
  FullStore,
  JsonValue,
  Message,
  MessageWindow,
  RepairReport,
  RouterRow,
  Session,
  SessionEvent,
  SessionSummary,
} from '@sessionkit/core';
import {
  assertKnownKeys,
  BaseStore,
  type NormalizedListOptions,
  type NormalizedMessageWindow,
  type StoredRoute,
  type StoreOperation,
  throwIfAborted,
} from '@sessionkit/core/adapter';
import type { Pool } from 'pg';
import { PostgresBackend } from './backend.js';
import { commitRecord } from './commit.js';
import type { StoreContext, StoreStats } from './context.js';
import { createRecord } from './create.js';
import { errors, wrapDriverError } from './errors.js';
import { appendEvent, listEvents } from './events.js';
import { loadSession, loadWindow } from './history-reads.js';
import { listSessions } from './list.js';
import { pruneRoots } from './prune.js';
import { rebuildIndex } from './repair.js';
import * as router from './router.js';
import { saveRecord } from './save.js';
import type { SearchScope } from './search-scope.js';
import { loadStatus, saveStatus } from './status.js';
import {
  type PostgresStoreOptions,
  SETUP_OPTION_KEYS,
  type StoreSetupOptions,
} from './store-options.js';
import { branchRecord, cloneRecord, mergeRecord, removeSession } from './tree.js';

/**
 * A sessionkit store on PostgreSQL (node-postgres): every capability, one row per message,
 * versioned migrations; the public methods are `BaseStore`'s (the contract's words).
 *
 * Guarantees: every write is one PostgreSQL transaction (a plain turn is one statement), so
 * a resolved write is committed and a failed one left nothing behind; a commit's operation
 * id is recorded in the same transaction (table `operations`, at least the last 1,000 per
 * session, checked by key); `load` and the windows are one MVCC read (never torn, never waiting on a
 * writer); listing and search read only `sessions` and the search tables, never message
 * bodies; branch, clone and merge read the source in their transaction under a row lock.
 *
 * Errors: as the contracts say; driver errors by SQLSTATE (`driverErrorCode` in errors.ts):
 * `unavailable` when PostgreSQL cannot be reached or keeps deadlocking, `corrupt` for a
 * missing table or function or an unexpected SQLSTATE (never with credentials).
 */
export class PostgresStore<M = Message> extends BaseStore<M> implements FullStore<M> {
  /** The schema this store works in. */
  readonly schema: string;
  /**
   * Counters for tests and diagnostics (see `StoreStats`): `messageBodyReads` counts the
   * statements that read rows of `messages` (load, windows, branch, clone, merge, save, a
   * truncate cutting a search row, repair; never listing, search, other commits, pruning).
   */
  readonly stats: StoreStats;
  readonly #backend: PostgresBackend;
  readonly #ctx: StoreContext;

  /**
   * A store that borrows `options.pool` (its `close()` leaves the pool open). Nothing is
   * sent to the server until the first call, which creates and migrates the schema when
   * needed (use `PostgresStore.fromPool` to migrate eagerly). While the store is open it
   * gives every checked-out client an `'error'` listener (client-guard.ts), so a connection
   * terminated right after it was handed out never crashes the process; the pool itself
   * should have one, as node-postgres requires. Throws `invalid_argument` for a missing
   * pool, a bad schema name or bad options.
   */
  constructor(options: PostgresStoreOptions) {
    super({ errors });
    this.#backend = new PostgresBackend(options);
    this.schema = this.#backend.schema;
    this.stats = this.#backend.stats;
    this.#ctx = this.#backend.ctx;
  }

  /**
   * A store borrowing `pool`, with the schema created and migrated before it resolves.
   * Throws `invalid_argument` (bad schema, refused credentials or database), `unavailable`
   * (PostgreSQL unreachable or not serving), `corrupt` (the migration failed otherwise,
   * e.g. `42501` permission denied: the message names the SQLSTATE).
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
   * Creates the schema and applies pending migrations now (otherwise the first call does).
   * Safe to call from many processes at once. Throws `unavailable`, `corrupt` (e.g.
   * permission denied), `closed`.
   */
  async migrate(): Promise<void> {
    if (this.isClosed) throw errors.closed();
    await this.prepare();
  }

  /**
   * What `list({ query })` searches in this store's schema (the `search` option): read from
   * the schema once the store is migrated; before that, the option (or `"messages"`).
   */
  get searchScope(): SearchScope {
    return this.#ctx.search.scope;
  }

  /**
   * Indexes the search text that writes left in `search_pending` now (the store does it by
   * itself about half a second after a write; search is exact either way, this only makes it
   * faster). Returns how many pending rows it took; rows another store's indexer holds at
   * that instant are left to it. Throws `unavailable`, `closed`.
   */
  async indexPendingSearch(): Promise<number> {
    await this.migrate();
    return this.#backend.indexer.drain();
  }

  protected override prepare(): Promise<void> {
    return this.#backend.migrate();
  }

  protected override toStoreError(e: unknown, operation: StoreOperation) {
    return wrapDriverError(e, operation, this.schema);
  }

  protected override closeBackend(): Promise<void> {
    return this.#backend.close();
  }

  protected override async insertSession(session: Session<M>): Promise<Session<M>> {
    return (await createRecord(this.#ctx, session as Session<unknown>)) as Session<M>;
  }

  protected override async readSession(id: string): Promise<Session<M>> {
    return (await loadSession(this.#ctx, id)) as Session<M>;
  }

  protected override async replaceSession(session: Session<M>): Promise<Session<M>> {
    return (await saveRecord(this.#ctx, session as Session<unknown>)) as Session<M>;
  }

  protected override removeSession(id: string): Promise<boolean> {
    const ctx = this.#ctx;
    return ctx.db.tx('delete', (c) => removeSession(c, ctx.statements, id));
  }

  protected override listSummaries(opts: NormalizedListOptions): Promise<SessionSummary[]> {
    return listSessions(this.#ctx, opts);
  }

  protected override writeCommit(id: string, input: CommitInput<M>, signal?: AbortSignal) {
    return commitRecord(this.#ctx, id, input as CommitInput<unknown>, signal);
  }

  protected override async writeBranch(parentId: string, atTurn: number): Promise<Session<M>> {
    return (await branchRecord(this.#ctx, parentId, atTurn)) as Session<M>;
  }

  protected override async writeClone(id: string): Promise<Session<M>> {
    return (await cloneRecord(this.#ctx, id)) as Session<M>;
  }

  protected override async writeMerge(childId: string): Promise<Session<M>> {
    const { db, statements: q, stats } = this.#ctx;
    const read = () => void stats.messageBodyReads++;
    return (await db.tx('merge', (c) => mergeRecord(c, q, childId, read))) as Session<M>;
  }

  protected override async readWindow(
    id: string,
    window: NormalizedMessageWindow,
  ): Promise<MessageWindow<M>> {
    const w = await loadWindow(this.#ctx, id, window);
    return { ...w, messages: w.messages as M[] };
  }

  protected override writeRuntimeStatus(id: string, json: string): Promise<void> {
    return saveStatus(this.#ctx, id, json);
  }

  protected override readRuntimeStatus(id: string): Promise<string | null> {
    return loadStatus(this.#ctx, id);
  }

  protected override writeBinding(channel: string, chatKey: string, thread: string, id: string) {
    return router.bind(this.#ctx, channel, chatKey, thread, id);
  }

  protected override readRoute(channel: string, chatKey: string, thread: string) {
    return router.readRoute(this.#ctx, channel, chatKey, thread) satisfies Promise<StoredRoute>;
  }

  protected override removeBinding(channel: string, chatKey: string, thread: string) {
    return router.unbind(this.#ctx, channel, chatKey, thread);
  }

  protected override writeFollow(channel: string, chatKey: string, target: string) {
    return router.follow(this.#ctx, channel, chatKey, target);
  }

  protected override touchBinding(channel: string, chatKey: string, thread: string) {
    return router.touch(this.#ctx, channel, chatKey, thread);
  }

  protected override readRecentBindings(limit: number): Promise<RouterRow[]> {
    return router.recent(this.#ctx, limit);
  }

  protected override appendEvent(id: string, type: string, payload: JsonValue) {
    return appendEvent(this.#ctx, id, type, JSON.stringify(payload)) as Promise<SessionEvent>;
  }

  protected override readEvents(id: string, after: number, limit: number | undefined) {
    return listEvents(this.#ctx, id, after, limit);
  }

  protected override async pruneRoots(max: number, signal?: AbortSignal): Promise<number> {
    throwIfAborted(errors, signal, 'enforceMax');
    const deleted = await pruneRoots(this.#ctx, max);
    this.#backend.upkeep.noteSessions(deleted);
    return deleted;
  }

  protected override async repairStore(signal?: AbortSignal): Promise<RepairReport> {
    const report = await rebuildIndex(this.#ctx, () => {
      if (this.isClosed) throw errors.closed();
      throwIfAborted(errors, signal, 'repair');
    });
    await this.#backend.indexer.drain();
    return report;
  }
}
