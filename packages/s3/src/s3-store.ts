import type { S3Client } from '@aws-sdk/client-s3';
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
  assertLiveSessionId,
  assertMax,
  assertRouterTuple,
  assertSaveInput,
  branchedLineage,
  branchHeader,
  cloneHeader,
  cloneJson,
  compareListOrder,
  createdLineage,
  KeyedMutex,
  normalizeEventQuery,
  normalizeLimit,
  normalizeListOptions,
  normalizeMessageWindow,
  prepareCreate,
  readLineage,
  resolveRoute,
  rootLineage,
  runtimeStatusText,
  searchTextOf,
  windowBounds,
} from '@sessionkit/core/adapter';
import { commitSession, mergeSession, saveSession } from './changes.js';
import type { StoreContext } from './context.js';
import { deleteSession } from './delete.js';
import { errors } from './errors.js';
import { appendEvent, readEvents } from './events.js';
import { readAllMessages, readLiveMessages, readMessages } from './history.js';
import { statusKey } from './keys.js';
import { childrenIn, indexView, listSessions } from './listing.js';
import type { ObjectIO, RequestStats } from './objects.js';
import type { State } from './records.js';
import { repairStore } from './repair.js';
import {
  bindingKey,
  followKey,
  nextRouterTime,
  readRouter,
  recentRows,
  updateRouter,
} from './router.js';
import type { SessionIndex } from './session-index.js';
import { type Current, readCurrent, readLive } from './session-log.js';
import { createSession } from './writes.js';

/** What `openS3Store` hands the store it opens. */
export interface S3StoreParts {
  io: ObjectIO;
  index: SessionIndex;
  /** Destroys the client on close when the store made it; undefined when borrowed. */
  ownedClient: S3Client | undefined;
}

/**
 * A sessionkit store on an S3 bucket: every capability, over immutable version objects
 * written with `If-None-Match: *` and compare-and-swap (`If-Match`) where an object must
 * change. Open it with `openS3Store` (which proves the server honours conditional writes).
 *
 * Every method validates its input before any request (`invalid_argument`), wraps S3
 * failures (`unavailable`, retryable, when the server cannot be reached, throttles or
 * fails with 5xx) and returns caller-owned values. See the README for the object layout
 * and the requests each operation makes.
 */
export class S3Store<M = Message> implements FullStore<M> {
  readonly #ctx: StoreContext;
  readonly #ownedClient: S3Client | undefined;
  #closed = false;

  /**
   * Use `openS3Store`, which checks the server and the options first.
   * @internal
   */
  constructor(parts: S3StoreParts) {
    this.#ctx = { io: parts.io, index: parts.index, sessionWrites: new KeyedMutex() };
    this.#ownedClient = parts.ownedClient;
    this.bucket = parts.io.bucket;
    this.prefix = parts.io.prefix;
    this.stats = parts.io.stats;
  }

  /** The bucket the store keeps its objects in. */
  readonly bucket: string;
  /** The key prefix of every object of the store (`""` or ending in `/`). */
  readonly prefix: string;
  /** Request counters of this store instance (they only grow). */
  readonly stats: Readonly<RequestStats>;

  // ---------------------------------------------------------------- Store

  /**
   * Stores a new session at revision 1 (core's `prepareCreate`). Throws `exists`,
   * `invalid_argument`, `unavailable`, `closed`.
   */
  async create(session: SessionInput<M>): Promise<Session<M>> {
    this.#assertOpen();
    const prepared = prepareCreate(errors, session as SessionInput<unknown>);
    const { messages, children: _children, ...header } = prepared;
    let parentLineage: State['lineage'] | undefined;
    if (header.parentId !== undefined) {
      // An unreadable parent gives no lineage to inherit, as a missing one does.
      const parent = await readCurrent(this.#ctx.io, header.parentId).catch((e: unknown) => {
        if (isSessionKitError(e, 'corrupt')) return undefined;
        throw e;
      });
      if (parent !== undefined && !parent.tombstone)
        parentLineage = readLineage(parent.state.lineage);
    }
    const lineage = createdLineage(header, parentLineage);
    await createSession(this.#ctx, header, messages, lineage, searchTextOf(messages));
    // Imports restore trees in any order: sessions naming this id as parent may exist.
    return this.#session(header, messages, await this.#children(header.id));
  }

  /**
   * The full session: its newest version's header and every message (a bounded number of
   * objects: the base and at most 32 appended versions), children from the index.
   * Throws `not_found`, `corrupt`, `invalid_argument`, `unavailable`, `closed`.
   */
  async load(id: string): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, id);
    const [{ current, messages }, entries] = await Promise.all([
      readLiveMessages(this.#ctx.io, id, (state) => ({ start: 0, end: state.messageCount })),
      indexView(this.#ctx),
    ]);
    return this.#session(current.state.header, messages, childrenIn(entries, id));
  }

  /**
   * Replaces the session (DESIGN `save`): `session.revision` must equal the stored one,
   * else `conflict`. Writes one version holding every message. Throws `not_found`,
   * `conflict`, `invalid_argument`, `unavailable`, `closed`.
   */
  async save(session: Session<M>): Promise<Session<M>> {
    this.#assertOpen();
    assertSaveInput(errors, session);
    const messages = cloneJson(session.messages) as unknown[];
    const state = await saveSession(this.#ctx, session as Session<unknown>, messages);
    return this.#session(state.header, messages, await this.#children(session.id));
  }

  /**
   * Deletes the session (a tombstone version, then its children promoted, router rows
   * dropped, objects removed). Throws `not_found`, `invalid_argument`, `unavailable`, `closed`.
   */
  async delete(id: string): Promise<void> {
    this.#assertOpen();
    assertId(errors, id);
    await deleteSession(this.#ctx, id);
  }

  /**
   * Summaries from the index shards (never message bodies; a query reads search-text
   * objects), filtered, ordered and paged as `ListOptions` says.
   * Throws `invalid_argument`, `unavailable`, `closed`.
   */
  async list(options?: ListOptions): Promise<SessionSummary[]> {
    this.#assertOpen();
    const opts = normalizeListOptions(errors, options);
    return listSessions(this.#ctx, opts);
  }

  /**
   * Closes the store: later calls fail with `closed`. Destroys the S3 client when the
   * store made it; a borrowed client stays open. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#ownedClient?.destroy();
  }

  // ---------------------------------------------------------------- Committer

  /**
   * The turn write: one new version object holding only the appended messages (or every
   * message on `replace`), with core's commit rules. Reads no stored message bodies.
   * Throws `not_found`, `conflict`, `invalid_argument`, `unavailable`, `closed`.
   */
  async commit(id: string, input: CommitInput<M>): Promise<CommitResult> {
    this.#assertOpen();
    assertId(errors, id);
    assertCommitInput(errors, id, input);
    return commitSession(this.#ctx, id, input as CommitInput<unknown>);
  }

  // ---------------------------------------------------------------- Brancher

  /**
   * A new session with the parent's first `atTurn` messages (core's `branchHeader`),
   * read from one version of the parent. Throws `not_found`, `invalid_argument`,
   * `unavailable`, `closed`.
   */
  async branch(parentId: string, atTurn: number): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, parentId);
    assertCount(errors, atTurn, 'branch: atTurn');
    const parent = await readLive(this.#ctx.io, parentId);
    assertBranchPoint(errors, parentId, atTurn, parent.state.messageCount);
    const messages = await readMessages(
      this.#ctx.io,
      parentId,
      parent.gen,
      parent.state.chain,
      0,
      atTurn,
    );
    const header = branchHeader(parent.state.header, newSessionId(), atTurn);
    const lineage = branchedLineage(parent.state.header, readLineage(parent.state.lineage));
    await createSession(this.#ctx, header, messages, lineage, searchTextOf(messages));
    return this.#session(header, messages, []);
  }

  /**
   * An independent copy with the full history (core's `cloneHeader`).
   * Throws `not_found`, `invalid_argument`, `unavailable`, `closed`.
   */
  async clone(id: string): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, id);
    const source = await readLive(this.#ctx.io, id);
    const messages = await readAllMessages(this.#ctx.io, source);
    const header = cloneHeader(source.state.header, newSessionId());
    await createSession(this.#ctx, header, messages, rootLineage(), searchTextOf(messages));
    return this.#session(header, messages, []);
  }

  /**
   * Fast-forwards the parent to the child's messages (core's `planMerge`), one version
   * of the parent. Throws `merge_diverged` (nothing written), `invalid_argument` (no
   * parent), `not_found`, `unavailable`, `closed`.
   */
  async merge(childId: string): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, childId);
    const { state, messages } = await mergeSession(this.#ctx, childId);
    return this.#session(state.header, messages, await this.#children(state.header.id));
  }

  // ---------------------------------------------------------------- HistoryReader

  /** The committed messages, or a window of them, from one version. Throws as `load`. */
  async loadMessages(id: string, window?: MessageWindowQuery): Promise<M[]> {
    return (await this.loadMessageWindow(id, window)).messages;
  }

  /**
   * A window of one version's messages, reading only the objects that hold it.
   * Throws `not_found`, `corrupt`, `invalid_argument`, `unavailable`, `closed`.
   */
  async loadMessageWindow(id: string, window?: MessageWindowQuery): Promise<MessageWindow<M>> {
    this.#assertOpen();
    assertId(errors, id);
    const normalized = normalizeMessageWindow(errors, window);
    const { current, messages } = await readLiveMessages(this.#ctx.io, id, (state) =>
      windowBounds(normalized, state.messageCount),
    );
    const { start } = windowBounds(normalized, current.state.messageCount);
    return {
      messages: messages as M[],
      offset: start,
      messageCount: current.state.messageCount,
      revision: current.state.header.revision,
    };
  }

  // ---------------------------------------------------------------- RuntimeStatusStore

  /**
   * Stores the status (one object beside the session's versions). Over 2 MiB →
   * `too_large`. Throws `not_found`, `invalid_argument`, `unavailable`, `closed`.
   */
  async saveRuntimeStatus(id: string, status: JsonValue): Promise<void> {
    this.#assertOpen();
    const text = runtimeStatusText(errors, id, status);
    const current = await readLive(this.#ctx.io, id);
    await this.#ctx.io.putPlain(
      statusKey(id, current.gen),
      text,
      `saving the runtime status of "${id}"`,
    );
  }

  /** The stored status, or `null`. Throws `not_found`, `invalid_argument`, `unavailable`, `closed`. */
  async loadRuntimeStatus(id: string): Promise<JsonValue | null> {
    this.#assertOpen();
    assertId(errors, id);
    const current = await readLive(this.#ctx.io, id);
    const got = await this.#ctx.io.get(
      statusKey(id, current.gen),
      `loading the runtime status of "${id}"`,
    );
    if (got === undefined) return null;
    try {
      return JSON.parse(got.text) as JsonValue;
    } catch (cause) {
      throw errors.corrupt(id, 'the runtime status is not JSON', cause);
    }
  }

  // ---------------------------------------------------------------- SessionRouter

  /** Binds the tuple to an existing session. Throws `not_found`, `invalid_argument`, `unavailable`, `closed`. */
  async bind(channel: string, chatKey: string, thread: string, sessionId: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'bind', channel, chatKey, thread, true);
    assertId(errors, sessionId);
    await readLive(this.#ctx.io, sessionId);
    await updateRouter(this.#ctx, (data) => {
      data.bindings.set(bindingKey(channel, chatKey, thread), {
        sessionId,
        channel,
        chatKey,
        thread,
        updatedAt: nextRouterTime(data),
      });
      return true;
    });
  }

  /** The session for the tuple, or `""` (core's `resolveRoute`). Throws `invalid_argument`, `unavailable`, `closed`. */
  async resolve(
    channel: string,
    chatKey: string,
    thread: string,
    liveSessionId: string,
  ): Promise<string> {
    this.#assertOpen();
    assertRouterTuple(errors, 'resolve', channel, chatKey, thread);
    assertLiveSessionId(errors, liveSessionId);
    const data = await readRouter(this.#ctx);
    return resolveRoute(
      data.follows.get(followKey(channel, chatKey))?.target,
      liveSessionId,
      data.bindings.get(bindingKey(channel, chatKey, thread))?.sessionId,
    );
  }

  /** Removes the binding (a missing one is fine). Throws `invalid_argument`, `unavailable`, `closed`. */
  async unbind(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'unbind', channel, chatKey, thread);
    await updateRouter(this.#ctx, (data) =>
      data.bindings.delete(bindingKey(channel, chatKey, thread)),
    );
  }

  /** Sets (or with `""` clears) the follow target. Throws `invalid_argument`, `unavailable`, `closed`. */
  async follow(channel: string, chatKey: string, target: string): Promise<void> {
    this.#assertOpen();
    assertFollowArgs(errors, channel, chatKey, target);
    const key = followKey(channel, chatKey);
    await updateRouter(this.#ctx, (data) => {
      if (target === '') return data.follows.delete(key);
      data.follows.set(key, { channel, chatKey, target });
      return true;
    });
  }

  /** Moves the binding's time forward (a missing binding is fine). Throws `invalid_argument`, `unavailable`, `closed`. */
  async touch(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'touch', channel, chatKey, thread);
    await updateRouter(this.#ctx, (data) => {
      const row = data.bindings.get(bindingKey(channel, chatKey, thread));
      if (row === undefined) return false;
      row.updatedAt = nextRouterTime(data);
      return true;
    });
  }

  /** Bindings, newest first (limit: absent or 0 → 50, at most 1000). Throws `invalid_argument`, `unavailable`, `closed`. */
  async recent(limit?: number): Promise<RouterRow[]> {
    this.#assertOpen();
    const n = normalizeLimit(errors, limit, 'recent: limit');
    return recentRows(await readRouter(this.#ctx), n);
  }

  // ---------------------------------------------------------------- EventLog

  /**
   * Appends an event (one object created with `If-None-Match: *`: gapless sequences).
   * Throws `not_found`, `invalid_argument`, `unavailable`, `closed`.
   */
  async append(id: string, type: string, payload: JsonValue = null): Promise<SessionEvent> {
    this.#assertOpen();
    assertId(errors, id);
    assertEventType(errors, type);
    assertJsonValue(errors, payload, 'event payload');
    return appendEvent(this.#ctx, id, type, cloneJson(payload));
  }

  /** Events after `afterSequence`, in order. Throws `not_found`, `invalid_argument`, `unavailable`, `closed`. */
  async events(id: string, query?: EventQuery): Promise<SessionEvent[]> {
    this.#assertOpen();
    assertId(errors, id);
    const { afterSequence, limit } = normalizeEventQuery(errors, query);
    return readEvents(this.#ctx, id, afterSequence, limit);
  }

  // ---------------------------------------------------------------- Pruner

  /**
   * Keeps the newest `max` root sessions (ranked as `list` ranks them, archived included)
   * and deletes the others with `delete`'s semantics, one by one (S3 has no multi-object
   * transaction). `max <= 0` means unlimited. Returns how many were deleted.
   * Throws `invalid_argument`, `unavailable`, `closed`.
   */
  async enforceMax(max: number): Promise<number> {
    this.#assertOpen();
    assertMax(errors, max);
    if (max <= 0) return 0;
    const entries = await indexView(this.#ctx);
    const roots = [...entries.values()]
      .filter((e) => e.header.parentId === undefined)
      .map((e) => e.header)
      .sort((a, b) => compareListOrder(a, b, false));
    let deleted = 0;
    for (const victim of roots.slice(max)) {
      try {
        await deleteSession(this.#ctx, victim.id);
        deleted++;
      } catch (e) {
        if (!isSessionKitError(e, 'not_found')) throw e;
      }
    }
    return deleted;
  }

  // ---------------------------------------------------------------- Repairer

  /**
   * Reads every session in full and rebuilds the index and search text from its versions.
   * Throws `unavailable`, `closed`.
   */
  async repair(): Promise<RepairReport> {
    this.#assertOpen();
    return repairStore(this.#ctx);
  }

  // ---------------------------------------------------------------- internals

  #assertOpen(): void {
    if (this.#closed) throw errors.closed();
  }

  async #children(id: string): Promise<string[]> {
    return childrenIn(await indexView(this.#ctx), id);
  }

  #session(header: State['header'], messages: unknown[], children: string[]): Session<M> {
    return {
      ...structuredClone(header),
      messages: structuredClone(messages) as M[],
      children,
    };
  }
}

export type { Current };
