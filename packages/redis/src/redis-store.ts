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
  createdLineage,
  KeyedMutex,
  normalizeEventQuery,
  normalizeLimit,
  normalizeListOptions,
  normalizeMessageWindow,
  prepareCreate,
  runtimeStatusText,
  searchTextOf,
} from '@sessionkit/core/adapter';
import { CallWatch } from './calls.js';
import { childrenOfOne } from './children.js';
import { commitTurn } from './commit.js';
import { assertSafeClient, isClusterClient } from './connection.js';
import { type RedisStoreStats, type StoreContext, serialWrite } from './context.js';
import { errors } from './errors.js';
import { appendEvent, readEvents } from './events.js';
import { IndexBatcher } from './index-batcher.js';
import { DEFAULT_PREFIX, KeySpace } from './keys.js';
import { listSummaries } from './listing.js';
import { loadSession, loadWindow } from './reads.js';
import { repairIndex } from './repair.js';
import { pruneRoots } from './retention.js';
import { mergeSession, saveSession } from './rewrites.js';
import * as router from './router.js';
import { loadStatus, saveStatus } from './runtime-status.js';
import type { RedisClient } from './scripts.js';
import { insertRecord, readState } from './session-io.js';
import { StateCache } from './state-cache.js';
import { branchSession, cloneSession, removeSession } from './tree.js';
import { writeToken } from './write-ledger.js';

/** Options of `new RedisStore(options)`. */
export interface RedisStoreOptions {
  /** The client to use: a standalone `Redis` or a `Cluster`. Borrowed: `close()` leaves it open. */
  client: RedisClient;
  /** Prepended to every key. Default `"sk:"`. No braces, glob characters or whitespace. */
  prefix?: string | undefined;
  /**
   * Seconds after a session's last write when every key of it expires together (sliding;
   * reads do not extend it). Default: none. Index entries of an expired session are
   * skipped by every read and removed by the next listing that meets them or `repair()`.
   */
  ttlSeconds?: number | undefined;
}

const OPTION_KEYS = ['client', 'prefix', 'ttlSeconds'] as const;

/** Marks options whose client the store owns (set by `openRedisStore` only). */
export const OWNED = Symbol('sessionkit.redis.owned');

/**
 * A sessionkit store on Redis (standalone or Redis Cluster) through ioredis, with every
 * capability. Each session's keys share the hash tag `{id}`: every write of a session is
 * one Lua script on one slot, checked against the write version the new header was
 * computed from (core's kit computes every header). Cross-session state (listing order,
 * children, router) lives under the tags `{~ix}` and `{~rt}`; listings read every summary
 * from the session's own keys, so a summary always equals `load`.
 *
 * Every method validates its arguments before any I/O (`invalid_argument`), wraps driver
 * errors (`unavailable` with `retryable: true` when Redis is unreachable, busy or failing
 * over; `corrupt` for unreadable data) and fails with `closed` after `close()`.
 */
export class RedisStore<M = Message> implements FullStore<M> {
  /** The key prefix of this store. */
  readonly prefix: string;
  /** Counters for tests: message-body reads, index entries healed by listings. */
  readonly stats: RedisStoreStats = { messageBodyReads: 0, indexHeals: 0 };
  readonly #ctx: StoreContext;
  readonly #cache = new StateCache();
  readonly #owned: boolean;
  #closed = false;

  /**
   * A store over a borrowed client. Throws `invalid_argument` for a missing client, a
   * client the store cannot be safe with (`keyPrefix` set; a Cluster reading from replicas —
   * see the README), a bad prefix or TTL, or an unknown option.
   */
  constructor(options: RedisStoreOptions) {
    assertKnownKeys(errors, options, OPTION_KEYS, 'RedisStore');
    this.#owned = (options as { [OWNED]?: boolean })[OWNED] === true;
    const client = options.client;
    if (typeof client !== 'object' || client === null || typeof client.evalsha !== 'function') {
      throw errors.invalid('RedisStore: options.client must be an ioredis Redis or Cluster client');
    }
    assertSafeClient(client);
    const ttl = options.ttlSeconds ?? 0;
    if (!Number.isSafeInteger(ttl) || ttl < 0) {
      throw errors.invalid(
        `RedisStore: ttlSeconds must be a non-negative integer, got ${String(ttl)}`,
      );
    }
    const keys = new KeySpace(options.prefix ?? DEFAULT_PREFIX);
    this.prefix = keys.prefix;
    const calls = new CallWatch(client);
    this.#ctx = {
      client,
      calls,
      keys,
      ttlMs: ttl * 1000,
      cluster: isClusterClient(client),
      orderWrites: new IndexBatcher({ client, calls, keys }),
      stats: this.stats,
      sessionWrites: new KeyedMutex(),
    };
  }

  /** The client this store uses (borrowed or owned). */
  get client(): RedisClient {
    return this.#ctx.client;
  }

  /** True when the client is a Redis Cluster client. */
  get cluster(): boolean {
    return this.#ctx.cluster;
  }

  // ---------------------------------------------------------------- Store

  /**
   * Stores a new session at revision 1 (defaults as in core's `prepareCreate`; given times
   * and `parentId` kept). Throws `exists`, `invalid_argument`, `unavailable`, `closed`.
   */
  async create(session: SessionInput<M>): Promise<Session<M>> {
    this.#open();
    const {
      messages,
      children: _c,
      ...header
    } = prepareCreate(errors, session as SessionInput<unknown>);
    const parent =
      header.parentId === undefined
        ? undefined
        : await readState(this.#ctx, header.parentId).catch(() => undefined);
    const texts = messages.map((m) => JSON.stringify(m));
    await insertRecord(this.#ctx, {
      header,
      lineage: createdLineage(header, parent?.lineage),
      messages: texts,
      searchText: searchTextOf(messages),
      token: writeToken(),
    });
    const children = await childrenOfOne(this.#ctx, header.id);
    return {
      ...header,
      messages: JSON.parse(`[${texts.join(',')}]`) as M[],
      children,
    } as Session<M>;
  }

  /** The full session with messages and children, caller-owned. Throws `not_found`, `corrupt`. */
  async load(id: string): Promise<Session<M>> {
    this.#open();
    assertId(errors, id);
    return (await loadSession(this.#ctx, id)) as Session<M>;
  }

  /**
   * Replaces the stored session when `session.revision` is the stored one (core's
   * `savedHeader`); the result has `revision + 1`. Throws `not_found`, `conflict`.
   */
  async save(session: Session<M>): Promise<Session<M>> {
    this.#open();
    assertSaveInput(errors, session);
    const saved = await saveSession(this.#ctx, this.#cache, session as Session<unknown>);
    saved.children = await childrenOfOne(this.#ctx, saved.id);
    return saved as Session<M>;
  }

  /**
   * Removes the session with its messages, runtime status, events, router bindings and the
   * follow targets that pin it; its children are promoted (core's `promotedChild`).
   * Throws `not_found`.
   */
  async delete(id: string): Promise<void> {
    this.#open();
    assertId(errors, id);
    if (!(await removeSession(this.#ctx, this.#cache, id))) throw errors.notFound(id);
  }

  /**
   * Summaries in listing order, each read from the session's own keys (never its
   * messages). Search is an exact, case-insensitive substring match run inside Redis over
   * each candidate's search text. Throws `invalid_argument`.
   */
  async list(options?: ListOptions): Promise<SessionSummary[]> {
    this.#open();
    const opts = normalizeListOptions(errors, options);
    return listSummaries(this.#ctx, opts);
  }

  /** Marks the store closed; quits the client when the store owns it. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#cache.clear();
    this.#ctx.calls.close();
    if (this.#owned) {
      try {
        await this.#ctx.client.quit();
      } catch {
        this.#ctx.client.disconnect();
      }
    }
  }

  // ---------------------------------------------------------------- Committer

  /**
   * One turn in one script on the session's slot: appended (or replaced) messages, patch
   * and increments (core's `applyCommitToSummary`). Its cost does not grow with the
   * stored history. This store's commits of one session run in the order they were
   * called. Throws `not_found`, `conflict` (nothing written), `invalid_argument`,
   * `unavailable` (Redis unreachable, or a commit that kept losing races with other
   * processes' writers), `closed`.
   */
  async commit(id: string, input: CommitInput<M>): Promise<CommitResult> {
    this.#open();
    assertId(errors, id);
    assertCommitInput(errors, id, input);
    return serialWrite(this.#ctx, id, () => {
      this.#open(); // closed while it waited: `closed`, as for any call after close()
      return commitTurn(this.#ctx, this.#cache, id, input as CommitInput<unknown>);
    });
  }

  // ---------------------------------------------------------------- Brancher

  /** A branch with the parent's first `atTurn` messages (parent read in one script). */
  async branch(parentId: string, atTurn: number): Promise<Session<M>> {
    this.#open();
    assertId(errors, parentId);
    assertCount(errors, atTurn, 'branch: atTurn');
    return this.load(await branchSession(this.#ctx, parentId, atTurn));
  }

  /** An independent copy with the full history and `metadata.clonedFrom`. */
  async clone(id: string): Promise<Session<M>> {
    this.#open();
    assertId(errors, id);
    return this.load(await cloneSession(this.#ctx, id));
  }

  /** Fast-forwards the parent to the child (core's `planMerge`) and returns the parent. */
  async merge(childId: string): Promise<Session<M>> {
    this.#open();
    assertId(errors, childId);
    return this.load(await mergeSession(this.#ctx, this.#cache, childId));
  }

  // ---------------------------------------------------------------- HistoryReader

  /** A snapshot (or a window of it) from one script. Throws `not_found`, `invalid_argument`. */
  async loadMessages(id: string, window?: MessageWindowQuery): Promise<M[]> {
    return (await this.loadMessageWindow(id, window)).messages;
  }

  /** The window with its offset, the history's count and the revision, from one snapshot. */
  async loadMessageWindow(id: string, window?: MessageWindowQuery): Promise<MessageWindow<M>> {
    this.#open();
    assertId(errors, id);
    const normalized = normalizeMessageWindow(errors, window);
    return (await loadWindow(this.#ctx, id, normalized)) as MessageWindow<M>;
  }

  // ---------------------------------------------------------------- RuntimeStatusStore

  /** Stores the status apart from the transcript. Throws `too_large`, `not_found`. */
  async saveRuntimeStatus(id: string, status: JsonValue): Promise<void> {
    this.#open();
    await saveStatus(this.#ctx, id, runtimeStatusText(errors, id, status));
  }

  /** The stored status, or `null`. Throws `not_found`. */
  async loadRuntimeStatus(id: string): Promise<JsonValue | null> {
    this.#open();
    assertId(errors, id);
    return loadStatus(this.#ctx, id);
  }

  // ---------------------------------------------------------------- SessionRouter

  /** Binds the tuple to an existing session. Throws `not_found`, `invalid_argument`. */
  async bind(channel: string, chatKey: string, thread: string, sessionId: string): Promise<void> {
    this.#open();
    assertRouterTuple(errors, 'bind', channel, chatKey, thread, true);
    assertId(errors, sessionId);
    await router.bind(this.#ctx, channel, chatKey, thread, sessionId);
  }

  /** The routed session id or `""` (a follow target wins). */
  async resolve(
    channel: string,
    chatKey: string,
    thread: string,
    liveSessionId: string,
  ): Promise<string> {
    this.#open();
    assertRouterTuple(errors, 'resolve', channel, chatKey, thread);
    assertLiveSessionId(errors, liveSessionId);
    return router.resolve(this.#ctx, channel, chatKey, thread, liveSessionId);
  }

  /** Removes the binding; a missing one is not an error. */
  async unbind(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#open();
    assertRouterTuple(errors, 'unbind', channel, chatKey, thread);
    await router.unbind(this.#ctx, router.tupleKey(channel, chatKey, thread));
  }

  /** Sets (`"tui"` or a session id) or clears (`""`) the follow target. */
  async follow(channel: string, chatKey: string, target: string): Promise<void> {
    this.#open();
    assertFollowArgs(errors, channel, chatKey, target);
    await router.follow(this.#ctx, channel, chatKey, target);
  }

  /** Moves the binding's time strictly forward; a missing binding is not an error. */
  async touch(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#open();
    assertRouterTuple(errors, 'touch', channel, chatKey, thread);
    await router.touch(this.#ctx, router.tupleKey(channel, chatKey, thread));
  }

  /** Bindings, newest first (absent or 0 → 50, at most 1000). */
  async recent(limit?: number): Promise<RouterRow[]> {
    this.#open();
    return router.recent(this.#ctx, normalizeLimit(errors, limit, 'recent: limit'));
  }

  // ---------------------------------------------------------------- EventLog

  /** Appends an event: gapless sequence and the session's revision, atomically. */
  async append(id: string, type: string, payload: JsonValue = null): Promise<SessionEvent> {
    this.#open();
    assertId(errors, id);
    assertEventType(errors, type);
    assertJsonValue(errors, payload, 'event payload');
    return appendEvent(this.#ctx, id, type, payload);
  }

  /** Events after `afterSequence` (default 0), at most `limit`. Throws `not_found`. */
  async events(id: string, query?: EventQuery): Promise<SessionEvent[]> {
    this.#open();
    assertId(errors, id);
    const { afterSequence, limit } = normalizeEventQuery(errors, query);
    return readEvents(this.#ctx, id, afterSequence, limit);
  }

  // ---------------------------------------------------------------- Pruner

  /**
   * Keeps the newest `max` roots (as `list` orders them, archived included) and deletes the
   * others with delete's semantics; `max <= 0` keeps all. Not one atomic step across slots:
   * victims are chosen first, then deleted one by one. Returns how many were deleted.
   */
  async enforceMax(max: number): Promise<number> {
    this.#open();
    assertMax(errors, max);
    if (max <= 0) return 0;
    return pruneRoots(this.#ctx, this.#cache, max);
  }

  // ---------------------------------------------------------------- Repairer

  /**
   * Rebuilds the listing order, children sets and pending marks from the sessions' own keys
   * (found with SCAN on every master). Unreadable sessions are reported and left as they
   * are. Safe while the store is in use.
   */
  async repair(): Promise<RepairReport> {
    this.#open();
    return repairIndex(this.#ctx);
  }

  #open(): void {
    if (this.#closed) throw errors.closed();
  }
}
