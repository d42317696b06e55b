// The public store: core's `BaseStore` (every argument validated and copied, the closed
// check, `{ signal }`, readiness) over the parts of the store that do the work (see the
// README's "Source layout"). Each primitive receives validated input.

import type {
  CommitInput,
  CommitResult,
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
  type NormalizedListOptions,
  type NormalizedMessageWindow,
  type StoredRoute,
  type StoreOperation,
} from '@sessionkit/core/adapter';
import { appendEvent, readEvents } from './events/event-log.js';
import { type HeaderJson, headerFromJson } from './format/records.js';
import { childrenOf } from './index-log/children.js';
import { rebuildIndex } from './index-log/rebuild.js';
import { emptyIndex } from './index-log/state.js';
import { listSessions } from './listing/list.js';
import { pruneRoots } from './listing/prune.js';
import { type FileStoreOptions, resolveOptions } from './options.js';
import {
  bindRoute,
  followRoute,
  readStoredRoute,
  recentRoutes,
  touchRoute,
  unbindRoute,
} from './router/router-file.js';
import { settleSearchMerges } from './search/search-merge.js';
import { commitLocked } from './session/commit.js';
import { createSession } from './session/create.js';
import { removeSession } from './session/delete.js';
import { assertSessionExists } from './session/folder.js';
import { readFullSession } from './session/full-read.js';
import { readMessageWindow } from './session/history-read.js';
import { lockForWrite } from './session/lock.js';
import { readRuntimeStatusText, writeRuntimeStatusText } from './session/runtime-status.js';
import { saveLocked } from './session/save.js';
import { branchSession, cloneSession, mergeSession } from './session/tree.js';
import { StoreContext } from './store/context.js';
import { errors, toStoreError } from './store/errors.js';
import { prepareStoreFolder } from './store/prepare.js';

export type { FileStoreOptions } from './options.js';

/**
 * The embedded default store: sessions as durable local files, safe for many processes
 * and for crashes; every capability of the contract (see `BaseStore` for the words of
 * each method). See the package README for the layout.
 *
 * Guarantees: every write resolves only after its data is durable (the commit journal's
 * or the file's `fdatasync`; unless `sync: false`); writes to one session are serialised
 * by a lock file shared by all processes (stale locks of dead processes are broken);
 * readers never take locks and never see a torn state; listing and search read only the
 * index and search files, never transcripts. A commit's `operationId` rides in the same
 * log record as the write (so in the same atomic step), and a snapshot carries the
 * session's last 1,000. Unreadable data is `corrupt` (naming the session), file-system
 * failures `unavailable` (or `invalid_argument` for an unusable path).
 */
export class FileStore<M = Message> extends BaseStore<M> implements FullStore<M> {
  /** The absolute store folder. */
  readonly dir: string;
  /**
   * Counters for tests and monitoring. `transcriptReads` grows every time the store reads
   * stored message bodies (a snapshot or commit-log body) of any session;
   * `transcriptBytesRead` by the bytes of snapshot and log files that whole loads and
   * windowed reads read (a window reads the log's tail and only its part of the snapshot).
   * With `sync: 'group'`, `groupFlushes` counts the journal's flushes (one `fdatasync`
   * each) and `groupCommits` the commits they acknowledged: their quotient is the mean
   * batch size. With `sync: true`, `inlineSyncs` counts the log fdatasyncs made on the
   * event loop (see the `inlineSyncMs` option).
   */
  readonly stats: StoreContext['stats'];
  readonly #ctx: StoreContext;

  /**
   * A store over `options.dir` (default `defaultFileStoreDir()`). Creates nothing until
   * the first call. Throws `invalid_argument` for unknown or bad options.
   */
  constructor(options: FileStoreOptions = {}) {
    super({ errors });
    this.#ctx = new StoreContext(resolveOptions(options));
    this.dir = this.#ctx.dir;
    this.stats = this.#ctx.stats;
  }

  protected override prepare(): Promise<void> {
    return prepareStoreFolder(this.#ctx);
  }

  protected override toStoreError(e: unknown, operation: StoreOperation, id?: string) {
    const mapped = toStoreError(e, operation, this.dir, id);
    return mapped === e ? super.toStoreError(e, operation, id) : (mapped as never);
  }

  /** Closes the kept descriptors and the journal (a commit still running closes its own). */
  protected override async closeBackend(): Promise<void> {
    const ctx = this.#ctx;
    ctx.closed = true;
    await ctx.journal?.close();
    await ctx.leases.close();
    await settleSearchMerges(ctx);
    ctx.keptFiles.dropAll();
    ctx.tips.clear();
    ctx.operations.clear();
    ctx.eventTails.clear();
    ctx.index = emptyIndex();
  }

  protected override async insertSession(session: Session<M>): Promise<Session<M>> {
    const header = await createSession(this.#ctx, session as Session<unknown>);
    return this.#session(header, session.messages, await childrenOf(this.#ctx, session.id));
  }

  protected override async readSession(id: string): Promise<Session<M>> {
    const { header, messages } = await readFullSession(this.#ctx, id);
    return this.#session(header, messages, await childrenOf(this.#ctx, id));
  }

  protected override async replaceSession(session: Session<M>): Promise<Session<M>> {
    const ctx = this.#ctx;
    const id = session.id;
    const header = await lockForWrite(ctx, id, () => saveLocked(ctx, session as Session<unknown>));
    return this.#session(header, session.messages, await childrenOf(ctx, id));
  }

  protected override removeSession(id: string): Promise<boolean> {
    return removeSession(this.#ctx, id);
  }

  protected override listSummaries(opts: NormalizedListOptions): Promise<SessionSummary[]> {
    return listSessions(this.#ctx, opts);
  }

  protected override writeCommit(
    id: string,
    input: CommitInput<M>,
    signal?: AbortSignal,
  ): Promise<CommitResult> {
    const ctx = this.#ctx;
    const commit = input as CommitInput<unknown>;
    return ctx.logSyncer.whileCommitting(() =>
      lockForWrite(ctx, id, () => commitLocked(ctx, id, commit, signal), true),
    );
  }

  protected override async writeBranch(parentId: string, atTurn: number): Promise<Session<M>> {
    const { header, messages } = await branchSession(this.#ctx, parentId, atTurn);
    return this.#session(header, messages, []);
  }

  protected override async writeClone(id: string): Promise<Session<M>> {
    const { header, messages } = await cloneSession(this.#ctx, id);
    return this.#session(header, messages, []);
  }

  protected override async writeMerge(childId: string): Promise<Session<M>> {
    const { header, messages } = await mergeSession(this.#ctx, childId);
    return this.#session(header, messages, await childrenOf(this.#ctx, header.id));
  }

  protected override async readWindow(
    id: string,
    window: NormalizedMessageWindow,
  ): Promise<MessageWindow<M>> {
    return (await readMessageWindow(this.#ctx, id, window)) as MessageWindow<M>;
  }

  protected override writeRuntimeStatus(id: string, json: string): Promise<void> {
    return writeRuntimeStatusText(this.#ctx, id, json);
  }

  protected override readRuntimeStatus(id: string): Promise<string | null> {
    return readRuntimeStatusText(this.#ctx, id);
  }

  protected override async writeBinding(
    channel: string,
    chatKey: string,
    thread: string,
    sessionId: string,
  ): Promise<void> {
    await assertSessionExists(this.#ctx, sessionId);
    await bindRoute(this.#ctx, channel, chatKey, thread, sessionId);
  }

  protected override readRoute(
    channel: string,
    chatKey: string,
    thread: string,
  ): Promise<StoredRoute> {
    return readStoredRoute(this.#ctx, channel, chatKey, thread);
  }

  protected override removeBinding(channel: string, chatKey: string, thread: string) {
    return unbindRoute(this.#ctx, channel, chatKey, thread);
  }

  protected override writeFollow(channel: string, chatKey: string, target: string) {
    return followRoute(this.#ctx, channel, chatKey, target);
  }

  protected override touchBinding(channel: string, chatKey: string, thread: string) {
    return touchRoute(this.#ctx, channel, chatKey, thread);
  }

  protected override readRecentBindings(limit: number): Promise<RouterRow[]> {
    return recentRoutes(this.#ctx, limit);
  }

  protected override appendEvent(
    id: string,
    type: string,
    payload: JsonValue,
  ): Promise<SessionEvent> {
    return lockForWrite(this.#ctx, id, () => appendEvent(this.#ctx, id, type, payload));
  }

  protected override readEvents(id: string, after: number, limit: number | undefined) {
    return readEvents(this.#ctx, id, after, limit);
  }

  protected override pruneRoots(max: number): Promise<number> {
    return pruneRoots(this.#ctx, max);
  }

  protected override repairStore(): Promise<RepairReport> {
    return rebuildIndex(this.#ctx);
  }

  #session(header: HeaderJson, messages: unknown[], children: string[]): Session<M> {
    return { ...headerFromJson(header), messages: messages as M[], children };
  }
}
