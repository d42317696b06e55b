import { createHash } from 'node:crypto';
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
import { isSessionKitError, newSessionId } from '@sessionkit/core';
import {
  assertBranchPoint,
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
  branchedLineage,
  branchHeader,
  cloneHeader,
  committedLineage,
  createdLineage,
  extendsHistory,
  normalizeEventQuery,
  normalizeLimit,
  normalizeListOptions,
  normalizeMessageWindow,
  prepareCreate,
  resolveRoute,
  rootLineage,
  runtimeStatusText,
  SEARCH_TEXT_SEPARATOR,
  savedLineage,
  setOwn,
} from '@sessionkit/core/adapter';
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { guardPool } from './client-guard.js';
import { type StoredCounters, throwOutOfRange } from './counters.js';
import { errors, isRetryableTxError, wrapDriverError } from './errors.js';
import { lineageOf, lineageParams } from './lineage.js';
import {
  deleteWithPromotions,
  headerOf,
  mergeIntoParent,
  parentLineage,
} from './lineage-writes.js';
import { parseWindow, type WindowRow, windowStatement } from './message-window.js';
import { type HeaderRow, parseBodies, parseJson, parseMessageRows, summaryOf } from './rows.js';
import {
  assertSchemaName,
  DEFAULT_SCHEMA,
  isConnectionError,
  migrate,
  quoteIdent,
} from './schema.js';
import { type SearchChunks, searchChunks } from './search-rows.js';
import { buildListQuery, headerColumns } from './sql.js';

export { SEARCH_CHUNK, type SearchChunks, searchChunks, searchRowText } from './search-rows.js';

/** Options of `new PostgresStore(options)`. */
export interface PostgresStoreOptions {
  /** The node-postgres pool to borrow. `close()` leaves it open: its lifecycle is yours. */
  pool: Pool;
  /**
   * The schema holding the tables; created and migrated on first use. A plain
   * identifier (`[A-Za-z_][A-Za-z0-9_]*`, at most 63 chars, not `pg_…`). Default
   * `"sessionkit"`.
   */
  schema?: string | undefined;
}

/** How often a statement or transaction is retried after a deadlock or serialization failure. */
const MAX_TX_RETRIES = 5;

// Marks a store created by `openPostgresStore`: its `close()` ends the pool.
const OWNS_POOL = Symbol('sessionkit.postgres.ownsPool');

/** @internal Options with the private ownership flag. */
export type InternalStoreOptions = PostgresStoreOptions & { [OWNS_POOL]?: boolean };

/** @internal Builds a store that owns `pool` (used by `openPostgresStore`). */
export function ownedStore<M>(pool: Pool, schema: string | undefined): PostgresStore<M> {
  const options: InternalStoreOptions = { pool, schema, [OWNS_POOL]: true };
  return new PostgresStore<M>(options);
}

interface CommitRow extends StoredCounters {
  code: 'ok' | 'not_found' | 'conflict_revision' | 'conflict_count' | 'out_of_range';
  revision: string | null;
  message_count: number | null;
  updated_at: Date | null;
  created_at: Date | null;
  parent_id: string | null;
  branched_at_turn: number | null;
  children: string[] | null;
}

/**
 * A sessionkit store on PostgreSQL (node-postgres): every capability, one row per
 * message, versioned migrations.
 *
 * Guarantees: every write is one PostgreSQL transaction (a commit is one round trip to a
 * server-side function), so a resolved write is committed and a failed one left nothing
 * behind; `load` and `loadMessages` are one MVCC read (never torn, never waiting on a
 * writer); listing and search read only `sessions` and `search_rows`, never message
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
  readonly stats = { messageBodyReads: 0, txRetries: 0 };
  readonly #pool: Pool;
  readonly #ownsPool: boolean;
  readonly #s: string;
  readonly #names: {
    commit: string;
    append: string;
    load: string;
    loadMessages: string;
    window: string;
  };
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
    assertKnownKeys(errors, options, ['pool', 'schema'], 'PostgresStore');
    const pool = options.pool as Pool | undefined;
    if (
      !pool ||
      typeof pool.query !== 'function' ||
      typeof (pool as { connect?: unknown }).connect !== 'function' ||
      // A pg Client has query and connect too, but no pool counters.
      typeof (pool as { totalCount?: unknown }).totalCount !== 'number'
    ) {
      throw errors.invalid('PostgresStore: options.pool must be a pg Pool (not a Client)');
    }
    const schema = options.schema ?? DEFAULT_SCHEMA;
    assertSchemaName(errors, schema);
    this.schema = schema;
    this.#pool = pool;
    this.#ownsPool = (options as InternalStoreOptions)[OWNS_POOL] === true;
    this.#s = quoteIdent(schema);
    // Prepared-statement names must be unique per connection and ≤ 63 bytes: hash the schema.
    const tag = createHash('sha1').update(schema).digest('hex').slice(0, 12);
    this.#names = {
      commit: `sk_commit_${tag}`,
      append: `sk_append_${tag}`,
      load: `sk_load_${tag}`,
      loadMessages: `sk_load_messages_${tag}`,
      window: `sk_load_window_${tag}`,
    };
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
    options: { schema?: string | undefined } = {},
  ): Promise<PostgresStore<M>> {
    assertKnownKeys(errors, options, ['schema'], 'PostgresStore.fromPool');
    const store = new PostgresStore<M>({ pool, schema: options.schema });
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

  // ---------------------------------------------------------------- Store

  /**
   * Stores a new session at revision 1 (one statement: header, message rows and search
   * rows) and returns it. Throws `exists`, `invalid_argument`, `unavailable`, `closed`.
   */
  async create(session: SessionInput<M>): Promise<Session<M>> {
    this.#assertOpen();
    const p = prepareCreate(errors, session as SessionInput<unknown>);
    await this.#whenReady();
    const bodies = p.messages.map((m) => JSON.stringify(m));
    const search = searchChunks(p.messages);
    const s = this.#s;
    const { messages: _m, children: _c, ...header } = p;
    const statement = (lineage: ReturnType<typeof rootLineage>): QueryConfig => ({
      text: `WITH ins AS (
  INSERT INTO ${s}.sessions (id, title, folder, parent_id, created_at, updated_at, model, provider,
    token_count, cost_usd, turn_count, metadata, status, branched_at_turn, revision, archived_at,
    mode, state, message_count, history_rewrites, merge_base)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, 1, $15, $16, $17, $18,
    $23, $24::jsonb)
  ON CONFLICT (id) DO NOTHING
  RETURNING id
), m AS (
  INSERT INTO ${s}.messages (session_id, seq, body)
  SELECT ins.id, u.o::integer - 1, u.b FROM ins, unnest($19::text[]) WITH ORDINALITY AS u(b, o)
), r AS (
  INSERT INTO ${s}.search_rows (session_id, seq, text)
  SELECT ins.id, u.o, u.t FROM ins, unnest($20::integer[], $21::text[]) AS u(o, t)
  UNION ALL
  SELECT ins.id, -1, $22::text FROM ins WHERE $22::text <> ''
)
SELECT (SELECT count(*) FROM ins)::integer AS created,
  ARRAY(SELECT c.id::text FROM ${s}.sessions AS c WHERE c.parent_id = $1 ORDER BY c.id) AS children`,
      values: [
        p.id,
        p.title,
        p.folder,
        p.parentId ?? null,
        p.createdAt,
        p.updatedAt,
        p.model,
        p.provider,
        p.tokenCount,
        p.costUsd,
        p.turnCount,
        JSON.stringify(p.metadata),
        p.status,
        p.branchedAtTurn ?? null,
        p.archivedAt ?? null,
        p.mode ?? null,
        p.state === undefined ? null : JSON.stringify(p.state),
        p.messages.length,
        bodies,
        search.seqs,
        search.texts,
        p.title.toLowerCase(),
        ...lineageParams(lineage),
      ],
    });
    type Created = { created: number; children: string[] };
    // With a parent (an import restoring a tree): core's createdLineage needs the
    // parent's lineage when it exists, read in the same transaction.
    const parentId = p.parentId;
    const r =
      parentId === undefined
        ? await this.#query<Created>(statement(rootLineage()), 'create')
        : await this.#tx('create', async (c) => {
            const lineage = createdLineage(header, await parentLineage(c, s, parentId));
            return c.query<Created>(statement(lineage));
          });
    const row = r.rows[0];
    if (row?.created !== 1) throw errors.exists(p.id);
    return {
      ...p,
      messages: parseBodies(p.id, bodies) as M[],
      children: row.children,
    } as Session<M>;
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
    const s = this.#s;
    this.stats.messageBodyReads++;
    // One statement, so one snapshot: the header (as JSON, on the first row only) and the
    // message rows in seq order, one row each (cheaper to decode than one huge string).
    const r = await this.#query<{ header: string | null; seq: number | null; body: string | null }>(
      {
        name: this.#names.load,
        text: `SELECT CASE WHEN m.seq IS NULL OR m.seq = 0 THEN row_to_json(h)::text END AS header,
  m.seq, m.body
FROM (SELECT ${headerColumns('s', s)} FROM ${s}.sessions AS s WHERE s.id = $1) AS h
LEFT JOIN LATERAL (
  SELECT x.seq, x.body FROM ${s}.messages AS x WHERE x.session_id = h.id ORDER BY x.seq
) AS m ON true`,
        values: [id],
      },
      'load',
    );
    const first = r.rows[0];
    if (!first) throw errors.notFound(id);
    if (first.header === null) throw errors.corrupt(id, 'message rows do not start at 0');
    const summary = summaryOf(parseJson(id, first.header, 'header') as unknown as HeaderRow);
    const { messageCount: _count, ...rest } = summary;
    const rows = first.seq === null ? [] : r.rows;
    return { ...rest, messages: parseMessageRows(id, rows) as M[] };
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
    const bodies = session.messages.map((m) => JSON.stringify(m));
    const metadata = { ...(session.metadata ?? {}) };
    const state = session.state === undefined ? undefined : JSON.stringify(session.state);
    const tokenCount = (session.tokenCount ?? 0) + 0;
    const costUsd = (session.costUsd ?? 0) + 0;
    const turnCount = (session.turnCount ?? 0) + 0;
    const s = this.#s;
    const row = await this.#tx('save', async (c) => {
      // Core's savedLineage: a rewrite unless the new messages extend the stored ones,
      // compared as JSON text under the row lock (save is O(history) anyway).
      const cur = await c.query<{ revision: string; message_count: number }>(
        `SELECT revision, message_count FROM ${s}.sessions WHERE id = $1 FOR UPDATE`,
        [session.id],
      );
      const stored = cur.rows[0];
      if (!stored) throw errors.notFound(session.id);
      if (Number(stored.revision) !== session.revision) {
        throw errors.conflict(session.id, session.revision, Number(stored.revision));
      }
      let extended = false;
      if (bodies.length >= stored.message_count) {
        this.stats.messageBodyReads++;
        const old = await c.query<{ body: string }>(
          `SELECT body FROM ${s}.messages WHERE session_id = $1 ORDER BY seq`,
          [session.id],
        );
        extended = extendsHistory(
          old.rows.map((r) => r.body),
          session.messages,
          true,
        );
      }
      const rewrite = savedLineage(rootLineage(), extended).rewrites !== 0;
      return this.#commitCall(
        session.id,
        {
          expectedRevision: session.revision,
          replace: true,
          rewrite,
          bodies,
          search: searchChunks(session.messages),
          title: session.title,
          folder: session.folder,
          status: session.status,
          model: session.model,
          provider: session.provider,
          tokenCount,
          costUsd,
          turnCount,
          metaReplace: true,
          metaSet: JSON.stringify(metadata),
          stateSet: true,
          state: state ?? null,
          archivedSet: true,
          archived: session.archivedAt ?? null,
          modeSet: true,
          mode: session.mode ?? null,
          wantHeader: true,
        },
        c,
      );
    });
    const out: Session<M> = {
      id: session.id,
      title: session.title,
      folder: session.folder,
      createdAt: row.created_at as Date,
      updatedAt: row.updated_at as Date,
      model: session.model,
      provider: session.provider,
      tokenCount,
      costUsd,
      turnCount,
      metadata,
      status: session.status,
      messages: parseBodies(session.id, bodies) as M[],
      children: row.children ?? [],
      revision: Number(row.revision),
    };
    if (row.parent_id !== null) out.parentId = row.parent_id;
    if (row.branched_at_turn !== null) out.branchedAtTurn = row.branched_at_turn;
    if (session.archivedAt !== undefined) out.archivedAt = new Date(session.archivedAt.getTime());
    if (session.mode !== undefined) out.mode = session.mode;
    if (state !== undefined) out.state = JSON.parse(state) as JsonValue;
    return out;
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
    const deleted = await this.#tx('delete', (c) => deleteWithPromotions(c, this.#s, id));
    if (!deleted) throw errors.notFound(id);
  }

  /**
   * Summaries matching the filters in one statement over `sessions` (and `search_rows`
   * for `query`), never touching message bodies. Search is a case-insensitive literal
   * substring match of the lower-cased title or of one message's text. Throws
   * `invalid_argument`, `unavailable`, `closed`.
   */
  async list(options?: ListOptions): Promise<SessionSummary[]> {
    this.#assertOpen();
    const opts = normalizeListOptions(errors, options);
    await this.#whenReady();
    const r = await this.#query<HeaderRow>(buildListQuery(this.#s, opts), 'list');
    return r.rows.map(summaryOf);
  }

  /**
   * Marks the store closed (every later call fails with `closed`) and, for a store from
   * `openPostgresStore`, ends its pool. A borrowed pool is left open. Idempotent.
   */
  async close(): Promise<void> {
    this.#closed = true;
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
    const messages = (input.replace ?? input.append ?? []) as unknown[];
    const p = input.patch ?? {};
    let metaSet: string | null = null;
    let metaDel: string[] | null = null;
    if (p.metadata) {
      const set: Record<string, string> = {};
      const del: string[] = [];
      for (const [k, v] of Object.entries(p.metadata)) {
        if (v === null) del.push(k);
        else if (v !== undefined) setOwn(set, k, v);
      }
      metaSet = JSON.stringify(set);
      metaDel = del;
    }
    const inc = input.increment ?? {};
    if (input.patch === undefined && input.replace === undefined) {
      return this.#appendCall(id, input, messages, inc);
    }
    const row = await this.#commitCall(id, {
      input: input as CommitInput<unknown>,
      expectedRevision: input.expectedRevision,
      expectedMessageCount: input.expectedMessageCount,
      replace: input.replace !== undefined,
      // Core's committedLineage: a `replace` is always a rewrite.
      rewrite: committedLineage(rootLineage(), input).rewrites !== 0,
      bodies: messages.map((m) => JSON.stringify(m)),
      search: searchChunks(messages),
      title: p.title,
      folder: p.folder,
      status: p.status,
      model: p.model,
      provider: p.provider,
      tokenCount: p.tokenCount === undefined ? undefined : p.tokenCount + 0,
      costUsd: p.costUsd === undefined ? undefined : p.costUsd + 0,
      turnCount: p.turnCount === undefined ? undefined : p.turnCount + 0,
      metaReplace: false,
      metaSet,
      metaDel,
      stateSet: p.state !== undefined,
      state: p.state === undefined || p.state === null ? null : JSON.stringify(p.state),
      archivedSet: p.archivedAt !== undefined,
      archived: p.archivedAt ?? null,
      modeSet: p.mode !== undefined,
      mode: p.mode ?? null,
      incTokens: inc.tokenCount,
      incCost: inc.costUsd,
      incTurns: inc.turnCount,
      wantHeader: false,
    });
    return {
      revision: Number(row.revision),
      messageCount: row.message_count as number,
      updatedAt: row.updated_at as Date,
    };
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
    return this.#copy('branch', parentId, atTurn);
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
    return this.#copy('clone', id, undefined);
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
    return this.#tx('merge', async (c) => {
      const { parent, bodies } = await mergeIntoParent(c, this.#s, childId, () => {
        this.stats.messageBodyReads++;
      });
      const { messageCount: _n, ...rest } = parent;
      return { ...rest, messages: parseBodies(parent.id, bodies) as M[] };
    });
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
    if (normalized.kind !== 'all') return (await this.#window(id, normalized)).messages as M[];
    await this.#whenReady();
    const s = this.#s;
    this.stats.messageBodyReads++;
    const r = await this.#query<{ seq: number | null; body: string | null }>(
      {
        name: this.#names.loadMessages,
        text: `SELECT m.seq, m.body FROM ${s}.sessions AS s
LEFT JOIN LATERAL (
  SELECT x.seq, x.body FROM ${s}.messages AS x WHERE x.session_id = s.id ORDER BY x.seq
) AS m ON true
WHERE s.id = $1`,
        values: [id],
      },
      'loadMessages',
    );
    const first = r.rows[0];
    if (!first) throw errors.notFound(id);
    return parseMessageRows(id, first.seq === null ? [] : r.rows) as M[];
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
    const w = await this.#window(id, normalizeMessageWindow(errors, window));
    return { ...w, messages: w.messages as M[] };
  }

  async #window(id: string, window: ReturnType<typeof normalizeMessageWindow>) {
    await this.#whenReady();
    this.stats.messageBodyReads++;
    const r = await this.#query<WindowRow>(
      windowStatement(this.#s, this.#names.window, id, window),
      'loadMessages',
    );
    return parseWindow(id, window, r.rows);
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
    const s = this.#s;
    const r = await this.#query(
      {
        text: `INSERT INTO ${s}.runtime_status (session_id, status)
SELECT id, $2 FROM ${s}.sessions WHERE id = $1
ON CONFLICT (session_id) DO UPDATE SET status = EXCLUDED.status
RETURNING 1`,
        values: [id, text],
      },
      'saveRuntimeStatus',
      id,
    );
    if (r.rowCount !== 1) throw errors.notFound(id);
  }

  /**
   * The stored status (freshly parsed), or `null` when none was saved. Throws
   * `not_found`, `corrupt`, `invalid_argument`, `unavailable`, `closed`.
   */
  async loadRuntimeStatus(id: string): Promise<JsonValue | null> {
    this.#assertOpen();
    assertId(errors, id);
    await this.#whenReady();
    const s = this.#s;
    const r = await this.#query<{ status: string | null }>(
      {
        text: `SELECT r.status FROM ${s}.sessions AS s
LEFT JOIN ${s}.runtime_status AS r ON r.session_id = s.id WHERE s.id = $1`,
        values: [id],
      },
      'loadRuntimeStatus',
    );
    const row = r.rows[0];
    if (!row) throw errors.notFound(id);
    return row.status === null ? null : parseJson(id, row.status, 'runtime status');
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
    const s = this.#s;
    const r = await this.#query(
      {
        text: `INSERT INTO ${s}.bindings (channel, chat_key, thread, session_id, updated_at)
SELECT $1, $2, $3, x.id, greatest($5::timestamptz,
  (SELECT max(b.updated_at) + interval '1 millisecond' FROM ${s}.bindings AS b))
FROM ${s}.sessions AS x WHERE x.id = $4
ON CONFLICT (channel, chat_key, thread)
DO UPDATE SET session_id = EXCLUDED.session_id, updated_at = EXCLUDED.updated_at
RETURNING 1`,
        values: [channel, chatKey, thread, sessionId, new Date()],
      },
      'bind',
      sessionId,
    );
    if (r.rowCount !== 1) throw errors.notFound(sessionId);
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
    const s = this.#s;
    const r = await this.#query<{ follow: string | null; bound: string | null }>(
      {
        text: `SELECT
  (SELECT f.target FROM ${s}.follows AS f WHERE f.channel = $1 AND f.chat_key = $2) AS follow,
  (SELECT b.session_id FROM ${s}.bindings AS b
    WHERE b.channel = $1 AND b.chat_key = $2 AND b.thread = $3) AS bound`,
        values: [channel, chatKey, thread],
      },
      'resolve',
    );
    const row = r.rows[0];
    return resolveRoute(row?.follow ?? undefined, liveSessionId, row?.bound ?? undefined);
  }

  /** Removes the binding; a missing one is not an error. Throws `invalid_argument`, `unavailable`, `closed`. */
  async unbind(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'unbind', channel, chatKey, thread);
    await this.#whenReady();
    await this.#query(
      {
        text: `DELETE FROM ${this.#s}.bindings WHERE channel = $1 AND chat_key = $2 AND thread = $3`,
        values: [channel, chatKey, thread],
      },
      'unbind',
    );
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
    const s = this.#s;
    if (target === '') {
      await this.#query(
        {
          text: `DELETE FROM ${s}.follows WHERE channel = $1 AND chat_key = $2`,
          values: [channel, chatKey],
        },
        'follow',
      );
      return;
    }
    await this.#query(
      {
        text: `INSERT INTO ${s}.follows (channel, chat_key, target) VALUES ($1, $2, $3)
ON CONFLICT (channel, chat_key) DO UPDATE SET target = EXCLUDED.target`,
        values: [channel, chatKey, target],
      },
      'follow',
    );
  }

  /**
   * Moves the binding's `updatedAt` strictly forward (past every binding's); a missing
   * binding is not an error. Throws `invalid_argument`, `unavailable`, `closed`.
   */
  async touch(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'touch', channel, chatKey, thread);
    await this.#whenReady();
    const s = this.#s;
    await this.#query(
      {
        text: `UPDATE ${s}.bindings SET updated_at = greatest($4::timestamptz,
  (SELECT max(b.updated_at) + interval '1 millisecond' FROM ${s}.bindings AS b))
WHERE channel = $1 AND chat_key = $2 AND thread = $3`,
        values: [channel, chatKey, thread, new Date()],
      },
      'touch',
    );
  }

  /**
   * Bindings, newest `updatedAt` first. `limit`: absent or 0 → 50, at most 1000.
   * Throws `invalid_argument`, `unavailable`, `closed`.
   */
  async recent(limit?: number): Promise<RouterRow[]> {
    this.#assertOpen();
    const n = normalizeLimit(errors, limit, 'recent: limit');
    await this.#whenReady();
    const r = await this.#query<{
      session_id: string;
      channel: string;
      chat_key: string;
      thread: string;
      updated_at: Date;
    }>(
      {
        text: `SELECT session_id, channel, chat_key, thread, updated_at FROM ${this.#s}.bindings
ORDER BY updated_at DESC, channel DESC, chat_key DESC, thread DESC LIMIT $1`,
        values: [n],
      },
      'recent',
    );
    return r.rows.map((row) => ({
      sessionId: row.session_id,
      channel: row.channel,
      chatKey: row.chat_key,
      thread: row.thread,
      updatedAt: row.updated_at,
    }));
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
    const s = this.#s;
    const r = await this.#query<{ seq: string; revision: string; at: Date }>(
      {
        text: `WITH x AS (
  UPDATE ${s}.sessions SET last_event_seq = last_event_seq + 1 WHERE id = $1
  RETURNING id, last_event_seq, revision
)
INSERT INTO ${s}.events (session_id, seq, revision, at, type, payload)
SELECT x.id, x.last_event_seq, x.revision, $2, $3, $4 FROM x
RETURNING seq, revision, at`,
        values: [id, new Date(), type, text],
      },
      'append',
    );
    const row = r.rows[0];
    if (!row) throw errors.notFound(id);
    return {
      sequence: Number(row.seq),
      revision: Number(row.revision),
      at: row.at,
      type,
      payload: JSON.parse(text) as JsonValue,
    };
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
    const s = this.#s;
    const r = await this.#query<{
      seq: string | null;
      revision: string;
      at: Date;
      type: string;
      payload: string;
    }>(
      {
        text: `SELECT e.seq, e.revision, e.at, e.type, e.payload FROM ${s}.sessions AS x
LEFT JOIN LATERAL (
  SELECT seq, revision, at, type, payload FROM ${s}.events
  WHERE session_id = x.id AND seq > $2 ORDER BY seq LIMIT $3
) AS e ON true
WHERE x.id = $1 ORDER BY e.seq`,
        values: [id, afterSequence, limit ?? null],
      },
      'events',
    );
    if (r.rows.length === 0) throw errors.notFound(id);
    const out: SessionEvent[] = [];
    for (const row of r.rows) {
      if (row.seq === null) continue;
      out.push({
        sequence: Number(row.seq),
        revision: Number(row.revision),
        at: row.at,
        type: row.type,
        payload: parseJson(id, row.payload, 'event payload'),
      });
    }
    return out;
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
    const r = await this.#query<{ n: number }>(
      { text: `SELECT ${this.#s}.sk_enforce_max($1) AS n`, values: [max] },
      'enforceMax',
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  // ---------------------------------------------------------------- Repairer

  /**
   * Rebuilds the derived data of every session from its authoritative rows: the
   * `message_count` column and the `search_rows` (title and message text), one session
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
    const s = this.#s;
    const report: RepairReport = { rebuilt: 0, skippedCorrupt: [], indexEntriesFixed: 0 };
    let after = '';
    for (;;) {
      this.#assertOpen();
      const page = await this.#query<{ id: string }>(
        {
          text: `SELECT id FROM ${s}.sessions WHERE id > $1::text COLLATE "C" ORDER BY id LIMIT 200`,
          values: [after],
        },
        'repair',
      );
      for (const { id } of page.rows) {
        const outcome = await this.#repairOne(id);
        if (outcome === 'gone') continue;
        if (typeof outcome === 'object') report.skippedCorrupt.push({ id, reason: outcome.reason });
        else {
          report.rebuilt++;
          if (outcome === 'fixed') report.indexEntriesFixed++;
        }
      }
      if (page.rows.length < 200) break;
      after = page.rows[page.rows.length - 1]!.id;
    }
    // Search rows of sessions that no longer exist (derived data only: message rows,
    // which are authoritative, are never deleted here).
    const orphans = await this.#query<{ n: number }>(
      {
        text: `WITH d AS (
  DELETE FROM ${s}.search_rows AS r
  WHERE NOT EXISTS (SELECT 1 FROM ${s}.sessions AS x WHERE x.id = r.session_id)
  RETURNING r.session_id
)
SELECT count(DISTINCT session_id)::integer AS n FROM d`,
      },
      'repair',
    );
    report.indexEntriesFixed += orphans.rows[0]?.n ?? 0;
    return report;
  }

  // ---------------------------------------------------------------- internals

  #assertOpen(): void {
    if (this.#closed) throw errors.closed();
  }

  async #whenReady(): Promise<void> {
    this.#ready ??= migrate(this.#pool, this.schema).then(
      () => undefined,
      (e: unknown) => {
        this.#ready = undefined;
        throw wrapDriverError(e, `migrating schema "${this.schema}"`, this.schema);
      },
    );
    await this.#ready;
  }

  /** One statement through the pool, retried after a deadlock or serialization failure. */
  async #query<R extends QueryResultRow = QueryResultRow>(
    config: QueryConfig,
    doing: string,
    notFoundOnFk?: string,
  ): Promise<QueryResult<R>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#pool.query<R>(config);
      } catch (e) {
        if (isRetryableTxError(e) && attempt < MAX_TX_RETRIES) {
          this.stats.txRetries++;
          await backoff(attempt);
          continue;
        }
        // The session was deleted between the existence check and the insert.
        if (notFoundOnFk !== undefined && (e as { code?: unknown }).code === '23503') {
          throw errors.notFound(notFoundOnFk);
        }
        throw wrapDriverError(e, doing, this.schema);
      }
    }
  }

  /** Runs `fn` in a transaction on one client; retries on deadlock/serialization failure. */
  async #tx<T>(doing: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let client: PoolClient;
      try {
        client = await this.#pool.connect();
      } catch (e) {
        throw wrapDriverError(e, doing, this.schema);
      }
      // A checked-out client has no pool listener: an error it emits between or during
      // statements (server shutdown, terminated backend, reset socket) would be an
      // unhandled 'error' event and kill the process. Record it and discard the client.
      let discard: Error | undefined;
      const onClientError = (err: Error) => {
        discard ??= err;
      };
      client.on('error', onClientError);
      try {
        await client.query('BEGIN');
        const out = await fn(client);
        await client.query('COMMIT');
        return out;
      } catch (e) {
        if (isConnectionError(e)) discard = e instanceof Error ? e : new Error(String(e));
        else {
          await client.query('ROLLBACK').catch((rollbackError: unknown) => {
            discard = rollbackError instanceof Error ? rollbackError : new Error('rollback failed');
          });
        }
        if (isSessionKitError(e)) throw e;
        if (isRetryableTxError(e) && attempt < MAX_TX_RETRIES) {
          this.stats.txRetries++;
          await backoff(attempt);
          continue;
        }
        throw wrapDriverError(e, doing, this.schema);
      } finally {
        client.removeListener('error', onClientError);
        client.release(discard);
      }
    }
  }

  /** The patch-free turn: `sk_append`, fewer parameters and a narrower UPDATE. */
  async #appendCall(
    id: string,
    input: CommitInput<M>,
    messages: unknown[],
    inc: { tokenCount?: number; costUsd?: number; turnCount?: number },
  ): Promise<CommitResult> {
    const search = searchChunks(messages);
    const r = await this.#query<CommitRow>(
      {
        name: this.#names.append,
        text: `SELECT * FROM ${this.#s}.sk_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        values: [
          id,
          input.expectedRevision ?? null,
          input.expectedMessageCount ?? null,
          messages.map((m) => JSON.stringify(m)),
          search.seqs,
          search.texts,
          new Date(),
          inc.tokenCount ?? null,
          inc.costUsd ?? null,
          inc.turnCount ?? null,
        ],
      },
      'commit',
    );
    const row = this.#commitOutcome(id, r.rows[0], input as CommitInput<unknown>);
    return {
      revision: Number(row.revision),
      messageCount: row.message_count as number,
      updatedAt: row.updated_at as Date,
    };
  }

  /**
   * The row of a successful sk_commit/sk_append; throws for the other codes
   * (`out_of_range`: core's error for the increment that leaves its counter's range).
   */
  #commitOutcome(id: string, row: CommitRow | undefined, input: CommitInput<unknown>): CommitRow {
    if (!row) throw errors.unavailable('commit: the commit function returned no row');
    switch (row.code) {
      case 'ok':
        return row;
      case 'not_found':
        throw errors.notFound(id);
      case 'conflict_count':
        throw errors.messageCountConflict(
          id,
          input.expectedMessageCount ?? -1,
          row.message_count ?? -1,
        );
      case 'out_of_range':
        return throwOutOfRange(id, row, input);
      default:
        throw errors.conflict(id, input.expectedRevision ?? '?', Number(row.revision));
    }
  }

  /** Runs sk_commit through the pool, or on `client` inside its transaction. */
  async #commitCall(id: string, a: CommitArgs, client?: PoolClient): Promise<CommitRow> {
    const config: QueryConfig = {
      name: this.#names.commit,
      text: `SELECT * FROM ${this.#s}.sk_commit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
  $13, $14, $15, $16, $17, $18, $19::jsonb, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30,
  $31)`,
      values: [
        id,
        a.expectedRevision ?? null,
        a.expectedMessageCount ?? null,
        a.replace,
        a.bodies,
        a.search.seqs,
        a.search.texts,
        new Date(),
        a.title ?? null,
        a.title === undefined ? null : a.title.toLowerCase(),
        a.folder ?? null,
        a.status ?? null,
        a.model ?? null,
        a.provider ?? null,
        a.tokenCount ?? null,
        a.costUsd ?? null,
        a.turnCount ?? null,
        a.metaReplace,
        a.metaSet ?? null,
        a.metaDel ?? null,
        a.stateSet,
        a.state ?? null,
        a.archivedSet,
        a.archived ?? null,
        a.modeSet,
        a.mode ?? null,
        a.incTokens ?? null,
        a.incCost ?? null,
        a.incTurns ?? null,
        a.wantHeader,
        a.rewrite,
      ],
    };
    const r = client
      ? await client.query<CommitRow>(config)
      : await this.#query<CommitRow>(config, 'commit');
    return this.#commitOutcome(id, r.rows[0], a.input ?? {});
  }

  /** Branch (`atTurn` given) or clone (`atTurn` undefined) of `sourceId`, in one transaction. */
  async #copy(kind: 'branch' | 'clone', sourceId: string, atTurn: number | undefined) {
    const s = this.#s;
    return this.#tx(kind, async (c) => {
      const src = await c.query<HeaderRow & { history_rewrites: string; merge_base: unknown }>(
        `SELECT ${headerColumns('x', s)}, x.history_rewrites, x.merge_base
         FROM ${s}.sessions AS x WHERE x.id = $1 FOR SHARE`,
        [sourceId],
      );
      const row = src.rows[0];
      if (!row) throw errors.notFound(sourceId);
      const source = summaryOf(row);
      // Core's lineage rules: a branch is based on the parent as it is now; a clone is a root.
      const lineage =
        kind === 'branch' ? branchedLineage(headerOf(source), lineageOf(row)) : rootLineage();
      if (atTurn !== undefined) assertBranchPoint(errors, sourceId, atTurn, source.messageCount);
      const upTo = atTurn ?? source.messageCount;
      // Core's rules for the new header (fields, counters, state, mode, metadata).
      const now = new Date();
      const header =
        atTurn !== undefined
          ? branchHeader(headerOf(source), newSessionId(), atTurn, now)
          : cloneHeader(headerOf(source), newSessionId(), now);
      const session = { ...header, messages: [], children: [] } as Session<M>;
      const id = session.id;
      this.stats.messageBodyReads++;
      const r = await c.query<{ seq: number; body: string }>(
        `WITH ins AS (
  INSERT INTO ${s}.sessions (id, title, folder, parent_id, created_at, updated_at, model, provider,
    token_count, cost_usd, turn_count, metadata, status, branched_at_turn, revision, mode, state,
    message_count, history_rewrites, merge_base)
  VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, 1, $14, $15, $16,
    $18, $19::jsonb)
  RETURNING id
), src AS (
  SELECT seq, body FROM ${s}.messages WHERE session_id = $17 AND seq < $16
), im AS (
  INSERT INTO ${s}.messages (session_id, seq, body) SELECT ins.id, src.seq, src.body FROM ins, src
)
SELECT src.seq, src.body FROM src ORDER BY src.seq`,
        [
          id,
          session.title,
          session.folder,
          session.parentId ?? null,
          now,
          session.model,
          session.provider,
          session.tokenCount,
          session.costUsd,
          session.turnCount,
          JSON.stringify(session.metadata),
          session.status,
          session.branchedAtTurn ?? null,
          session.mode ?? null,
          session.state === undefined ? null : JSON.stringify(session.state),
          upTo,
          sourceId,
          ...lineageParams(lineage),
        ],
      );
      session.messages = parseMessageRows(sourceId, r.rows) as M[];
      // Search rows are computed from the copied messages: a chunk of the source may
      // straddle the branch point.
      const chunks = searchChunks(session.messages);
      const title = session.title.toLowerCase();
      if (title !== '') {
        chunks.seqs.push(-1);
        chunks.texts.push(title);
      }
      if (chunks.seqs.length > 0) {
        await c.query(
          `INSERT INTO ${s}.search_rows (session_id, seq, text)
           SELECT $1, u.o, u.t FROM unnest($2::integer[], $3::text[]) AS u(o, t)`,
          [id, chunks.seqs, chunks.texts],
        );
      }
      return session;
    });
  }

  /** Repairs one session's derived data; `'gone'` when it vanished meanwhile. */
  async #repairOne(id: string): Promise<'gone' | 'ok' | 'fixed' | { reason: string }> {
    const s = this.#s;
    return this.#tx('repair', async (c) => {
      const head = await c.query<{ title: string; message_count: number; state: string | null }>(
        `SELECT title, message_count, state FROM ${s}.sessions WHERE id = $1 FOR UPDATE`,
        [id],
      );
      const h = head.rows[0];
      if (!h) return 'gone' as const;
      this.stats.messageBodyReads++;
      const msgs = await c.query<{ seq: number; body: string }>(
        `SELECT seq, body FROM ${s}.messages WHERE session_id = $1 ORDER BY seq`,
        [id],
      );
      const messages: unknown[] = [];
      for (let i = 0; i < msgs.rows.length; i++) {
        const m = msgs.rows[i]!;
        if (m.seq !== i) return { reason: `message rows have a gap at ${i} (found seq ${m.seq})` };
        try {
          messages.push(JSON.parse(m.body));
        } catch {
          return { reason: `message ${i} is not valid JSON` };
        }
      }
      if (h.state !== null) {
        try {
          JSON.parse(h.state);
        } catch {
          return { reason: 'state is not valid JSON' };
        }
      }
      const stored = await c.query<{ seq: number; text: string }>(
        `SELECT seq, text FROM ${s}.search_rows WHERE session_id = $1 ORDER BY seq`,
        [id],
      );
      // Row boundaries depend on how the history was committed; the text does not. Each
      // row starts at a message (with the separator), so no match spans two rows.
      const chunks = searchChunks(messages);
      const title = h.title.toLowerCase();
      const storedTitle = stored.rows.find((r) => r.seq === -1)?.text ?? '';
      const storedRows = stored.rows.filter((r) => r.seq >= 0);
      const searchOk =
        storedTitle === title &&
        storedRows.every(
          (r) => r.seq < messages.length && r.text.startsWith(SEARCH_TEXT_SEPARATOR),
        ) &&
        storedRows.map((r) => r.text).join('') === chunks.texts.join('');
      const countOk = h.message_count === messages.length;
      if (searchOk && countOk) return 'ok' as const;
      if (!searchOk) {
        if (title !== '') {
          chunks.seqs.push(-1);
          chunks.texts.push(title);
        }
        await c.query(`DELETE FROM ${s}.search_rows WHERE session_id = $1`, [id]);
        await c.query(
          `INSERT INTO ${s}.search_rows (session_id, seq, text)
           SELECT $1, u.seq, u.text FROM unnest($2::integer[], $3::text[]) AS u(seq, text)`,
          [id, chunks.seqs, chunks.texts],
        );
      }
      if (!countOk) {
        await c.query(`UPDATE ${s}.sessions SET message_count = $2 WHERE id = $1`, [
          id,
          messages.length,
        ]);
      }
      return 'fixed' as const;
    });
  }
}

/** Arguments of the `sk_commit` function (see schema.ts). */
interface CommitArgs {
  /** The commit's input (for core's out-of-range error); absent for save. */
  input?: CommitInput<unknown> | undefined;
  expectedRevision?: number | undefined;
  expectedMessageCount?: number | undefined;
  replace: boolean;
  /** Whether the write rewrites the history (core's committedLineage / savedLineage). */
  rewrite: boolean;
  bodies: string[];
  search: SearchChunks;
  title?: string | undefined;
  folder?: string | undefined;
  status?: string | undefined;
  model?: string | undefined;
  provider?: string | undefined;
  tokenCount?: number | undefined;
  costUsd?: number | undefined;
  turnCount?: number | undefined;
  metaReplace: boolean;
  metaSet?: string | null | undefined;
  metaDel?: string[] | null | undefined;
  stateSet: boolean;
  state?: string | null | undefined;
  archivedSet: boolean;
  archived?: Date | null | undefined;
  modeSet: boolean;
  mode?: string | null | undefined;
  incTokens?: number | undefined;
  incCost?: number | undefined;
  incTurns?: number | undefined;
  wantHeader: boolean;
}

function backoff(attempt: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.random() * 5 * (attempt + 1)));
}
