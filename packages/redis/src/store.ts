// The store: the kit's base class over Redis. Every primitive is one script on the
// session's slot (plus the index steps that go with it); the kit plans every write.
import type {
  CommitInput,
  FullStore,
  JsonValue,
  Message,
  MessageWindow,
  RepairReport,
  RouterRow,
  Session,
  SessionSummary,
} from '@sessionkit/core';
import {
  assertKnownKeys,
  BaseStore,
  bindingKey,
  type NormalizedListOptions,
  type NormalizedMessageWindow,
  SessionWriteQueue,
  type StoreOperation,
} from '@sessionkit/core/adapter';
import { CallWatch } from './calls.js';
import { childrenOfOne } from './children.js';
import { commitSession, saveSession } from './commit.js';
import { assertSafeClient, isClusterClient } from './connection.js';
import type { RedisStoreStats, StoreContext } from './context.js';
import { createSession } from './create.js';
import { errors, wrapRedisError } from './errors.js';
import { appendEvent, readEvents } from './events.js';
import { IndexBatcher } from './index-batcher.js';
import { DEFAULT_PREFIX, KeySpace } from './keys.js';
import { listSummaries } from './list.js';
import { pruneRoots } from './prune.js';
import { loadSession, loadWindow } from './reads.js';
import { rebuildIndex, upgradeStore } from './repair.js';
import { replicaWaitOf } from './replicas.js';
import * as router from './router.js';
import type { RedisClient } from './scripts.js';
import { StateCache } from './state-cache.js';
import { loadStatus, saveStatus } from './status.js';
import { branchSession, cloneSession, mergeSession, removeSession } from './tree.js';

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
  /**
   * Replicas that must have a write before it resolves (Redis `WAIT`, sent with the write
   * in one pipeline to the master that owns the session's slot). Default 0: a write
   * resolves when the master has it, and a failover after the master's death can lose it
   * (Redis replication is asynchronous). With N ≥ 1 a write that fewer replicas confirm
   * within `waitReplicasTimeoutMs` fails `unavailable` (retryable): it has landed on the
   * master but is not confirmed; retrying a commit with the same `operationId` is safe.
   * Against a server with fewer replicas than N every write fails that way. See the README,
   * "Durability and failover".
   */
  waitReplicas?: number | undefined;
  /** How long a write waits for `waitReplicas` (ms). Default 1,000; needs `waitReplicas`. */
  waitReplicasTimeoutMs?: number | undefined;
}

const OPTION_KEYS = [
  'client',
  'prefix',
  'ttlSeconds',
  'waitReplicas',
  'waitReplicasTimeoutMs',
] as const;

/** Marks options whose client the store owns (set by `openRedisStore` only). */
export const OWNED = Symbol('sessionkit.redis.owned');

/**
 * A sessionkit store on Redis (standalone or Redis Cluster) through ioredis, with every
 * capability; the contract's words are `BaseStore`'s. Each session's keys share the hash
 * tag `{id}`: every write of a session is one Lua script on one slot, checked against the
 * write version its plan was made from (the kit plans every write). A commit's operation
 * id is recorded by that same script, in the session's slot, beside the write. Cross-session
 * state (listing order, children, router) lives under the tags `{~ix}` and `{~rt}`;
 * listings read every summary from the session's own keys, so a summary always equals
 * `load`. Driver errors are `unavailable` (retryable) when Redis is unreachable, busy or
 * failing over, `corrupt` for data something else wrote. The first call of a store
 * upgrades data of the previous release (`upgradeStore`).
 */
export class RedisStore<M = Message> extends BaseStore<M> implements FullStore<M> {
  /** The key prefix of this store. */
  readonly prefix: string;
  /** Counters for tests: message-body reads, index entries healed by listings. */
  readonly stats: RedisStoreStats = { messageBodyReads: 0, indexHeals: 0, summaryReads: 0 };
  readonly #ctx: StoreContext;
  readonly #owned: boolean;

  /**
   * A store over a borrowed client. Throws `invalid_argument` for a missing client, a
   * client the store cannot be safe with (`keyPrefix` set; a Cluster reading from replicas —
   * see the README), a bad prefix, TTL or `waitReplicas` setting, or an unknown option.
   */
  constructor(options: RedisStoreOptions) {
    super({ errors });
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
      replicaWait: replicaWaitOf(options.waitReplicas, options.waitReplicasTimeoutMs),
      cluster: isClusterClient(client),
      orderWrites: new IndexBatcher({ client, calls, keys }),
      stats: this.stats,
      sessionWrites: new SessionWriteQueue(errors),
      cache: new StateCache(),
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

  protected override prepare(): Promise<void> {
    return upgradeStore(this.#ctx);
  }

  protected override toStoreError(e: unknown, operation: StoreOperation, id?: string) {
    return wrapRedisError(e, id === undefined ? operation : `${operation} of session "${id}"`);
  }

  protected override async closeBackend(): Promise<void> {
    this.#ctx.cache.clear();
    this.#ctx.calls.close();
    if (!this.#owned) return;
    try {
      await this.#ctx.client.quit();
    } catch {
      this.#ctx.client.disconnect();
    }
  }

  protected override async insertSession(session: Session<M>, signal?: AbortSignal) {
    return (await createSession(this.#ctx, session, signal)) as Session<M>;
  }

  protected override async readSession(id: string): Promise<Session<M>> {
    return (await loadSession(this.#ctx, id)) as Session<M>;
  }

  protected override async replaceSession(session: Session<M>, signal?: AbortSignal) {
    const header = await this.#queued(session.id, () => saveSession(this.#ctx, session, signal));
    const children = await childrenOfOne(this.#ctx, session.id);
    return { ...header, messages: session.messages, children } as Session<M>;
  }

  protected override removeSession(id: string, signal?: AbortSignal): Promise<boolean> {
    return removeSession(this.#ctx, id, signal);
  }

  protected override listSummaries(opts: NormalizedListOptions): Promise<SessionSummary[]> {
    return listSummaries(this.#ctx, opts);
  }

  protected override writeCommit(id: string, input: CommitInput<M>, signal?: AbortSignal) {
    const commit = input as CommitInput<unknown>;
    return this.#queued(id, () => commitSession(this.#ctx, id, commit, signal));
  }

  protected override async writeBranch(parentId: string, atTurn: number, signal?: AbortSignal) {
    return this.readSession(await branchSession(this.#ctx, parentId, atTurn, signal));
  }

  protected override async writeClone(id: string, signal?: AbortSignal): Promise<Session<M>> {
    return this.readSession(await cloneSession(this.#ctx, id, signal));
  }

  protected override async writeMerge(childId: string, signal?: AbortSignal) {
    return this.readSession(await mergeSession(this.#ctx, childId, signal));
  }

  protected override async readWindow(id: string, window: NormalizedMessageWindow) {
    return (await loadWindow(this.#ctx, id, window)) as MessageWindow<M>;
  }

  protected override writeRuntimeStatus(id: string, json: string, signal?: AbortSignal) {
    return saveStatus(this.#ctx, id, json, signal);
  }

  protected override readRuntimeStatus(id: string): Promise<string | null> {
    return loadStatus(this.#ctx, id);
  }

  protected override writeBinding(channel: string, chatKey: string, thread: string, id: string) {
    return router.bind(this.#ctx, channel, chatKey, thread, id);
  }

  protected override readRoute(channel: string, chatKey: string, thread: string) {
    return router.readRoute(this.#ctx, channel, chatKey, thread);
  }

  protected override removeBinding(channel: string, chatKey: string, thread: string) {
    return router.unbind(this.#ctx, bindingKey(channel, chatKey, thread));
  }

  protected override writeFollow(channel: string, chatKey: string, target: string) {
    return router.follow(this.#ctx, channel, chatKey, target);
  }

  protected override touchBinding(channel: string, chatKey: string, thread: string) {
    return router.touch(this.#ctx, bindingKey(channel, chatKey, thread));
  }

  protected override readRecentBindings(limit: number): Promise<RouterRow[]> {
    return router.recent(this.#ctx, limit);
  }

  protected override appendEvent(
    id: string,
    type: string,
    payload: JsonValue,
    signal?: AbortSignal,
  ) {
    return appendEvent(this.#ctx, id, type, payload, signal);
  }

  protected override readEvents(id: string, after: number, limit: number | undefined) {
    return readEvents(this.#ctx, id, after, limit);
  }

  protected override pruneRoots(max: number, signal?: AbortSignal): Promise<number> {
    return pruneRoots(this.#ctx, max, signal);
  }

  protected override repairStore(): Promise<RepairReport> {
    return rebuildIndex(this.#ctx);
  }

  /** `write` of `id` after this store's earlier writes of it (`closed` if it waited past close). */
  #queued<T>(id: string, write: () => Promise<T>): Promise<T> {
    return this.#ctx.sessionWrites.run(id, () => {
      if (this.isClosed) throw errors.closed();
      return write();
    });
  }
}
