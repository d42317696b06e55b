// The S3 store: the kit's base class over immutable version objects and conditional
// writes. Each primitive gets validated copies and makes the requests of its operation.
import type { S3Client } from '@aws-sdk/client-s3';
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
  BaseStore,
  bindingKey,
  followKey,
  type NormalizedListOptions,
  type NormalizedMessageWindow,
  SessionWriteQueue,
  type StoredRoute,
  windowBounds,
} from '@sessionkit/core/adapter';
import type { State } from './codec.js';
import { commitSession, saveSession } from './commit.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { appendEvent, readEvents } from './events.js';
import { FoldNotes } from './fold.js';
import { readLiveMessages } from './history.js';
import { statusKey } from './keys.js';
import { KnownHeads } from './known-heads.js';
import { childrenOf, listSessions } from './list.js';
import type { ObjectIO, RequestStats } from './objects.js';
import { OffPathWork } from './off-path.js';
import { pruneRoots } from './prune.js';
import { rebuildIndex } from './repair.js';
import { nextRouterTime, readRouter, recentRows, updateRouter } from './router.js';
import type { SessionIndex } from './session-index.js';
import { readLive } from './session-log.js';
import { branchSession, cloneSession, insertSession, mergeSession, removeSession } from './tree.js';
import { WriteMarkers } from './write-markers.js';
import { rememberRead } from './writes.js';

/** What `openS3Store` hands the store it opens. */
export interface S3StoreParts {
  io: ObjectIO;
  index: SessionIndex;
  /** Destroys the client on close when the store made it; undefined when borrowed. */
  ownedClient: S3Client | undefined;
  /** The store's grace of superseded objects (from its descriptor). */
  pruneGraceMs: number;
}

/**
 * A sessionkit store on an S3 bucket: every capability, over immutable version objects
 * written with `If-None-Match: *` and compare-and-swap (`If-Match`) where an object must
 * change. Open it with `openS3Store` (which proves the server honours conditional writes).
 * The contract's words are `BaseStore`'s; S3 failures are `unavailable` (retryable) when
 * the server cannot be reached, throttles or fails with 5xx. See the README for the object
 * layout and the requests each operation makes.
 */
export class S3Store<M = Message> extends BaseStore<M> implements FullStore<M> {
  readonly #ctx: StoreContext;
  readonly #ownedClient: S3Client | undefined;

  /** The bucket the store keeps its objects in. */
  readonly bucket: string;
  /** The key prefix of every object of the store (`""` or ending in `/`). */
  readonly prefix: string;
  /** Request counters of this store instance (they only grow). */
  readonly stats: Readonly<RequestStats>;

  /**
   * Use `openS3Store`, which checks the server and the options first.
   * @internal
   */
  constructor(parts: S3StoreParts) {
    // "fresh": every primitive returns values parsed from S3 or copies it made itself.
    super({ errors });
    const sessionWrites = new SessionWriteQueue(errors);
    this.#ctx = {
      io: parts.io,
      index: parts.index,
      markers: new WriteMarkers(parts.index),
      knownHeads: new KnownHeads(),
      offPath: new OffPathWork(),
      folds: new FoldNotes(),
      sessionWrites,
      pruneGraceMs: parts.pruneGraceMs,
    };
    this.#ownedClient = parts.ownedClient;
    this.bucket = parts.io.bucket;
    this.prefix = parts.io.prefix;
    this.stats = parts.io.stats;
  }

  /**
   * Resolves once the work this store started off its callers' paths has ended: search
   * text, index entries, folds and removals of superseded objects (and any they started).
   * Nothing waits for it to be correct: it lets a caller (a test, a shutdown) see the
   * bucket with that work done. Never rejects (that work's failures are swallowed; later
   * writes and readers redo it).
   */
  async settled(): Promise<void> {
    await this.#ctx.offPath.settled();
    await this.#ctx.index.writesSettled();
  }

  protected override async closeBackend(): Promise<void> {
    // Writes still under way go first, then the markers they kept up: an owned client is
    // gone after this.
    await this.#ctx.offPath.settled();
    await this.#ctx.index.writesSettled();
    this.#ctx.markers.close();
    await this.#ctx.index.settled();
    this.#ownedClient?.destroy();
  }

  protected override async insertSession(session: Session<M>, signal?: AbortSignal) {
    const state = await insertSession(this.#ctx, session as Session<unknown>, signal);
    // Imports restore trees in any order: sessions naming this id as parent may exist.
    return this.#session(state, session.messages, await this.#children(state.header.id));
  }

  protected override async readSession(id: string): Promise<Session<M>> {
    const [{ current, messages }, children] = await Promise.all([
      readLiveMessages(this.#ctx.io, id, (state) => ({ start: 0, end: state.messageCount })),
      childrenOf(this.#ctx, id),
    ]);
    rememberRead(this.#ctx, current);
    return this.#session(current.state, messages, children);
  }

  protected override async replaceSession(session: Session<M>, signal?: AbortSignal) {
    const state = await saveSession(this.#ctx, session as Session<unknown>, signal);
    return this.#session(state, session.messages, await this.#children(session.id));
  }

  protected override removeSession(id: string, signal?: AbortSignal): Promise<boolean> {
    return removeSession(this.#ctx, id, signal);
  }

  protected override listSummaries(opts: NormalizedListOptions): Promise<SessionSummary[]> {
    return listSessions(this.#ctx, opts);
  }

  protected override writeCommit(id: string, input: CommitInput<M>, signal?: AbortSignal) {
    return commitSession(this.#ctx, id, input as CommitInput<unknown>, signal);
  }

  protected override async writeBranch(parentId: string, atTurn: number, signal?: AbortSignal) {
    const { state, messages } = await branchSession(this.#ctx, parentId, atTurn, signal);
    return this.#session(state, messages, []);
  }

  protected override async writeClone(id: string, signal?: AbortSignal): Promise<Session<M>> {
    const { state, messages } = await cloneSession(this.#ctx, id, signal);
    return this.#session(state, messages, []);
  }

  protected override async writeMerge(childId: string, signal?: AbortSignal) {
    const { state, messages } = await mergeSession(this.#ctx, childId, signal);
    // The child's messages were parsed for this call only: the result may own them.
    return this.#session(state, messages, await this.#children(state.header.id));
  }

  protected override async readWindow(
    id: string,
    window: NormalizedMessageWindow,
  ): Promise<MessageWindow<M>> {
    const { current, messages } = await readLiveMessages(this.#ctx.io, id, (state) =>
      windowBounds(window, state.messageCount),
    );
    rememberRead(this.#ctx, current);
    const { start } = windowBounds(window, current.state.messageCount);
    return {
      messages: messages as M[],
      offset: start,
      messageCount: current.state.messageCount,
      revision: current.state.header.revision,
    };
  }

  protected override async writeRuntimeStatus(id: string, json: string): Promise<void> {
    const current = await readLive(this.#ctx.io, id);
    await this.#ctx.io.putPlain(statusKey(id, current.gen), json, `saving the status of "${id}"`);
  }

  protected override async readRuntimeStatus(id: string): Promise<string | null> {
    const current = await readLive(this.#ctx.io, id);
    const doing = `loading the runtime status of "${id}"`;
    return (await this.#ctx.io.get(statusKey(id, current.gen), doing))?.text ?? null;
  }

  protected override async writeBinding(
    channel: string,
    chatKey: string,
    thread: string,
    sessionId: string,
  ): Promise<void> {
    await readLive(this.#ctx.io, sessionId);
    await updateRouter(this.#ctx, (data) => {
      const updatedAt = nextRouterTime(data);
      const row = { sessionId, channel, chatKey, thread, updatedAt };
      data.bindings.set(bindingKey(channel, chatKey, thread), row);
      return true;
    });
  }

  protected override async readRoute(channel: string, chatKey: string, thread: string) {
    const data = await readRouter(this.#ctx);
    return {
      followTarget: data.follows.get(followKey(channel, chatKey))?.target,
      sessionId: data.bindings.get(bindingKey(channel, chatKey, thread))?.sessionId,
    } satisfies StoredRoute;
  }

  protected override async removeBinding(channel: string, chatKey: string, thread: string) {
    const key = bindingKey(channel, chatKey, thread);
    await updateRouter(this.#ctx, (data) => data.bindings.delete(key));
  }

  protected override async writeFollow(channel: string, chatKey: string, target: string) {
    const key = followKey(channel, chatKey);
    await updateRouter(this.#ctx, (data) => {
      if (target === '') return data.follows.delete(key);
      data.follows.set(key, { channel, chatKey, target });
      return true;
    });
  }

  protected override async touchBinding(channel: string, chatKey: string, thread: string) {
    await updateRouter(this.#ctx, (data) => {
      const row = data.bindings.get(bindingKey(channel, chatKey, thread));
      if (row === undefined) return false;
      row.updatedAt = nextRouterTime(data);
      return true;
    });
  }

  protected override async readRecentBindings(limit: number): Promise<RouterRow[]> {
    return recentRows(await readRouter(this.#ctx), limit);
  }

  protected override appendEvent(
    id: string,
    type: string,
    payload: JsonValue,
    signal?: AbortSignal,
  ): Promise<SessionEvent> {
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

  #children(id: string): Promise<string[]> {
    return childrenOf(this.#ctx, id);
  }

  #session(state: State, messages: unknown[], children: string[]): Session<M> {
    return { ...state.header, messages: messages as M[], children };
  }
}
