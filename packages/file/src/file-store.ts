// The public store: validates every argument, then delegates to the part of the store
// that does the work (see the README's "Source layout").

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
  assertLiveSessionId,
  assertMax,
  assertRouterTuple,
  assertSaveInput,
  cloneJson,
  createdLineage,
  normalizeEventQuery,
  normalizeLimit,
  normalizeListOptions,
  normalizeMessageWindow,
  prepareCreate,
  runtimeStatusText,
} from '@sessionkit/core/adapter';
import { appendEvent, readEvents } from './events/event-log.js';
import { type HeaderJson, headerFromJson, headerToJson } from './format/records.js';
import { childrenOf } from './index-log/children.js';
import { rebuildIndex } from './index-log/rebuild.js';
import { emptyIndex } from './index-log/state.js';
import { listSessions } from './listing/list.js';
import { pruneRoots } from './listing/prune.js';
import { type FileStoreOptions, resolveOptions } from './options.js';
import {
  bindRoute,
  followRoute,
  recentRoutes,
  resolveBoundRoute,
  touchRoute,
  unbindRoute,
} from './router/router-file.js';
import { branchSession, cloneSession } from './session/branch.js';
import { commitLocked } from './session/commit.js';
import { createSessionLocked, parentLineage } from './session/create.js';
import { removeSession } from './session/delete.js';
import { assertSessionExists } from './session/folder.js';
import { readFullSession } from './session/full-read.js';
import { readMessageWindow } from './session/history-read.js';
import { lockForWrite } from './session/lock.js';
import { mergeSession } from './session/merge.js';
import { loadRuntimeStatus, saveRuntimeStatus } from './session/runtime-status.js';
import { saveLocked } from './session/save.js';
import { StoreContext } from './store/context.js';
import { errors, toStoreError } from './store/errors.js';
import { prepareStoreFolder } from './store/open.js';

export type { FileStoreOptions } from './options.js';

/**
 * The embedded default store: sessions as durable local files, safe for many processes
 * and for crashes. See the package README for the layout.
 *
 * Guarantees: every write resolves only after its data is fsync'd (unless `sync: false`);
 * writes to one session are serialised by a lock file shared by all processes (stale
 * locks of dead processes are broken); readers never take locks and never see a torn
 * state; listing and search read only the index and search files, never transcripts.
 * Every method validates its arguments before any I/O (`invalid_argument`), reports
 * unreadable data as `corrupt` (naming the session), file-system failures as
 * `unavailable` (or `invalid_argument` for an unusable path), and fails with `closed`
 * after `close()`.
 */
export class FileStore<M = Message> implements FullStore<M> {
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
  readonly stats: {
    transcriptReads: number;
    transcriptBytesRead: number;
    groupFlushes: number;
    groupCommits: number;
    inlineSyncs: number;
  };
  readonly #ctx: StoreContext;
  #ready: Promise<void> | undefined;

  /**
   * A store over `options.dir` (default `defaultFileStoreDir()`). Creates nothing until
   * the first call. Throws `invalid_argument` for unknown or bad options.
   */
  constructor(options: FileStoreOptions = {}) {
    this.#ctx = new StoreContext(resolveOptions(options));
    this.dir = this.#ctx.dir;
    this.stats = this.#ctx.stats;
  }

  // ------------------------------------------------------------------ Store

  /**
   * Stores a new session at revision 1 (a snapshot file, fsync'd) and returns it.
   * Throws `exists`, `invalid_argument`, `closed`, `unavailable`.
   */
  async create(session: SessionInput<M>): Promise<Session<M>> {
    return this.#run('create', async () => {
      const prepared = prepareCreate(errors, session as SessionInput<unknown>);
      await this.#open();
      const ctx = this.#ctx;
      const { messages, children: _c, ...rest } = prepared;
      const header = headerToJson(rest);
      const lineage = createdLineage(rest, await parentLineage(ctx, rest.parentId));
      await lockForWrite(ctx, prepared.id, () =>
        createSessionLocked(ctx, header, lineage, messages),
      );
      return this.#toSession(header, cloneJson(messages), await childrenOf(ctx, header.id));
    });
  }

  /**
   * The full session (newest snapshot plus its log), caller-owned. Throws `not_found`,
   * `corrupt` (damaged snapshot or a damaged log record followed by more data),
   * `invalid_argument`, `closed`.
   */
  async load(id: string): Promise<Session<M>> {
    return this.#run(
      'load',
      async () => {
        assertId(errors, id);
        await this.#open();
        const { header, messages } = await readFullSession(this.#ctx, id);
        return this.#toSession(header, messages, await childrenOf(this.#ctx, id));
      },
      id,
    );
  }

  /**
   * Replaces the stored session (a new snapshot). `session.revision` must equal the stored
   * revision, else `conflict` and nothing is written. `children`, `parentId`,
   * `branchedAtTurn` and `createdAt` are kept as stored. Throws `not_found`, `conflict`,
   * `invalid_argument`, `closed`.
   */
  async save(session: Session<M>): Promise<Session<M>> {
    return this.#run(
      'save',
      async () => {
        assertSaveInput(errors, session);
        await this.#open();
        const id = session.id;
        const messages = cloneJson(session.messages) as unknown[];
        const header = await lockForWrite(this.#ctx, id, () =>
          saveLocked(this.#ctx, session as Session<unknown>, messages),
        );
        return this.#toSession(header, cloneJson(messages), await childrenOf(this.#ctx, id));
      },
      session?.id,
    );
  }

  /**
   * Removes the session folder (messages, runtime status, events), its router bindings
   * and the follow targets that pin it; its children are promoted to its parent (their
   * revision and `updatedAt` do not change). Throws `not_found`, `invalid_argument`,
   * `closed`. A corrupt session can be deleted.
   */
  async delete(id: string): Promise<void> {
    return this.#run(
      'delete',
      async () => {
        assertId(errors, id);
        await this.#open();
        if (!(await removeSession(this.#ctx, id))) throw errors.notFound(id);
      },
      id,
    );
  }

  /**
   * Summaries from the index, filtered, ordered and paged as `ListOptions` says. Reads only
   * the new tail of `index.log` since the last call, and for `query` the per-session search
   * files; never a transcript. Throws `invalid_argument`, `corrupt` (damaged index: run
   * `repair()`), `closed`.
   */
  async list(options?: ListOptions): Promise<SessionSummary[]> {
    return this.#run('list', async () => {
      const opts = normalizeListOptions(errors, options);
      await this.#open();
      return listSessions(this.#ctx, opts);
    });
  }

  /**
   * Marks the store closed: later calls fail with `closed`. Closes the kept append
   * descriptors (a commit still running closes its own when it finishes) and drops the
   * caches. Idempotent.
   */
  async close(): Promise<void> {
    const ctx = this.#ctx;
    ctx.closed = true;
    await ctx.journal?.close();
    await ctx.leases.close();
    ctx.keptFiles.dropAll();
    ctx.tips.clear();
    ctx.eventTails.clear();
    ctx.index = emptyIndex();
  }

  // ------------------------------------------------------------------ Committer

  /**
   * Appends one framed record (header after the commit plus the new messages) to the
   * session's log and fsyncs it: the cost does not depend on the stored history, except
   * for a periodic snapshot whose cost amortises to a constant per appended byte. `replace`
   * writes a new snapshot instead. Expectations that do not hold → `conflict`, nothing
   * written. Throws `not_found`, `conflict`, `invalid_argument`, `closed`.
   */
  async commit(id: string, input: CommitInput<M>): Promise<CommitResult> {
    return this.#run(
      'commit',
      async () => {
        assertId(errors, id);
        assertCommitInput(errors, id, input);
        await this.#open();
        const append = input.append ? (cloneJson(input.append) as unknown[]) : undefined;
        const replace = input.replace ? (cloneJson(input.replace) as unknown[]) : undefined;
        return this.#ctx.logSyncer.whileCommitting(() =>
          lockForWrite(
            this.#ctx,
            id,
            () => commitLocked(this.#ctx, id, input as CommitInput<unknown>, append, replace),
            true,
          ),
        );
      },
      id,
    );
  }

  // ------------------------------------------------------------------ Brancher

  /**
   * A new session with copies of the parent's first `atTurn` messages, the parent's
   * title, folder, model, provider, mode and counters, `metadata.branchedFrom`,
   * `parentId` and `branchedAtTurn`. The parent is read under its lock, so no concurrent
   * change is lost; its `children` are derived from the index. Throws `not_found`,
   * `invalid_argument`, `closed`.
   */
  async branch(parentId: string, atTurn: number): Promise<Session<M>> {
    return this.#run(
      'branch',
      async () => {
        assertId(errors, parentId);
        assertCount(errors, atTurn, 'branch: atTurn');
        await this.#open();
        const { header, messages } = await branchSession(this.#ctx, parentId, atTurn);
        return this.#toSession(header, messages, []);
      },
      parentId,
    );
  }

  /**
   * An independent copy (fresh id, revision 1, no parent, not archived) with the full
   * history, `metadata.clonedFrom = id`. Throws `not_found`, `invalid_argument`, `closed`.
   */
  async clone(id: string): Promise<Session<M>> {
    return this.#run(
      'clone',
      async () => {
        assertId(errors, id);
        await this.#open();
        const { header, messages } = await cloneSession(this.#ctx, id);
        return this.#toSession(header, messages, []);
      },
      id,
    );
  }

  /**
   * Fast-forwards the parent to the child's messages (a new snapshot, `revision + 1`)
   * under the parent's lock, so concurrent merges are serialised. Core's `planMerge`
   * decides from the stored lineage: the parent's history must be unchanged since the
   * branch point (same length as `branchedAtTurn`, not rewritten since the child's base),
   * else `merge_diverged` and nothing is written; each counter becomes the parent's plus
   * what the branch gained. The child is unchanged. Throws `merge_diverged`,
   * `invalid_argument` for a root, `not_found`, `closed`.
   */
  async merge(childId: string): Promise<Session<M>> {
    return this.#run(
      'merge',
      async () => {
        assertId(errors, childId);
        await this.#open();
        const { header, messages } = await mergeSession(this.#ctx, childId);
        const parentId = header.id;
        return this.#toSession(header, messages, await childrenOf(this.#ctx, parentId));
      },
      childId,
    );
  }

  // ------------------------------------------------------------------ HistoryReader

  /**
   * The committed messages, or a window of them (`{last: n}`, `{offset, limit}`; core's
   * `MessageWindowQuery`), caller-owned: read from one snapshot and its log without a
   * lock; a record still being appended is not yet visible, so the result equals the
   * history (or a slice of it) before or after any concurrent commit. A window reads the
   * log from its end and only its messages' bytes of the snapshot (through the snapshot's
   * offset table), so its cost grows with the window, not the history (a session last
   * written before format 3 is read whole until its next write). Throws `not_found`,
   * `corrupt`, `invalid_argument` (bad id or window, before any I/O), `closed`.
   */
  async loadMessages(id: string, window?: MessageWindowQuery): Promise<M[]> {
    return this.#run('loadMessages', async () => (await this.#window(id, window)).messages, id);
  }

  /**
   * Like `loadMessages(id, window)`, with the window's absolute position, the history's
   * length and the revision, all from the same snapshot (core's `MessageWindow`). Throws
   * `not_found`, `corrupt`, `invalid_argument`, `closed`.
   */
  async loadMessageWindow(id: string, window?: MessageWindowQuery): Promise<MessageWindow<M>> {
    return this.#run('loadMessageWindow', () => this.#window(id, window), id);
  }

  async #window(id: string, window: MessageWindowQuery | undefined): Promise<MessageWindow<M>> {
    assertId(errors, id);
    const normalized = normalizeMessageWindow(errors, window);
    await this.#open();
    return (await readMessageWindow(this.#ctx, id, normalized)) as MessageWindow<M>;
  }

  // ------------------------------------------------------------------ RuntimeStatusStore

  /**
   * Writes `status` to the session's own `status.json` (atomic, 0600), never touching the
   * transcript. Over `MAX_RUNTIME_STATUS_BYTES` → `too_large`, nothing written. Throws
   * `not_found`, `invalid_argument`, `closed`.
   */
  async saveRuntimeStatus(id: string, status: JsonValue): Promise<void> {
    return this.#run(
      'saveRuntimeStatus',
      async () => {
        const text = runtimeStatusText(errors, id, status);
        await this.#open();
        await saveRuntimeStatus(this.#ctx, id, text);
      },
      id,
    );
  }

  /** The stored runtime status, or `null` when none was saved. Throws `not_found`, `corrupt`. */
  async loadRuntimeStatus(id: string): Promise<JsonValue | null> {
    return this.#run(
      'loadRuntimeStatus',
      async () => {
        assertId(errors, id);
        await this.#open();
        return loadRuntimeStatus(this.#ctx, id);
      },
      id,
    );
  }

  // ------------------------------------------------------------------ SessionRouter

  /**
   * Binds `(channel, chatKey, thread)` to an existing session, replacing any binding
   * (`router.json`, rewritten atomically under a lock). Throws `not_found`,
   * `invalid_argument`, `closed`.
   */
  async bind(channel: string, chatKey: string, thread: string, sessionId: string): Promise<void> {
    return this.#run(
      'bind',
      async () => {
        assertRouterTuple(errors, 'bind', channel, chatKey, thread, true);
        assertId(errors, sessionId);
        await this.#open();
        await assertSessionExists(this.#ctx, sessionId);
        await bindRoute(this.#ctx, channel, chatKey, thread, sessionId);
      },
      sessionId,
    );
  }

  /**
   * The session for the tuple, or `""`. A follow target of `(channel, chatKey)` wins:
   * `"tui"` gives `liveSessionId` (the binding when that is `""`), any other target that
   * id. Throws `invalid_argument`, `closed`.
   */
  async resolve(
    channel: string,
    chatKey: string,
    thread: string,
    liveSessionId: string,
  ): Promise<string> {
    return this.#run('resolve', async () => {
      assertRouterTuple(errors, 'resolve', channel, chatKey, thread);
      assertLiveSessionId(errors, liveSessionId);
      await this.#open();
      return resolveBoundRoute(this.#ctx, channel, chatKey, thread, liveSessionId);
    });
  }

  /** Removes the binding; a missing one is not an error. Throws `invalid_argument`, `closed`. */
  async unbind(channel: string, chatKey: string, thread: string): Promise<void> {
    return this.#run('unbind', async () => {
      assertRouterTuple(errors, 'unbind', channel, chatKey, thread);
      await this.#open();
      await unbindRoute(this.#ctx, channel, chatKey, thread);
    });
  }

  /**
   * Sets the follow target of `(channel, chatKey)`: `"tui"`, a session id (format checked
   * only), or `""` to clear. Empty channel → `invalid_argument`. Throws `closed`.
   */
  async follow(channel: string, chatKey: string, target: string): Promise<void> {
    return this.#run('follow', async () => {
      assertFollowArgs(errors, channel, chatKey, target);
      await this.#open();
      await followRoute(this.#ctx, channel, chatKey, target);
    });
  }

  /**
   * Moves the binding's `updatedAt` strictly forward; a missing binding is not an error.
   * Throws `invalid_argument`, `closed`.
   */
  async touch(channel: string, chatKey: string, thread: string): Promise<void> {
    return this.#run('touch', async () => {
      assertRouterTuple(errors, 'touch', channel, chatKey, thread);
      await this.#open();
      await touchRoute(this.#ctx, channel, chatKey, thread);
    });
  }

  /** Bindings, newest first; `limit` absent or 0 → 50, at most 1000. Throws `invalid_argument`, `closed`. */
  async recent(limit?: number): Promise<RouterRow[]> {
    return this.#run('recent', async () => {
      const n = normalizeLimit(errors, limit, 'recent: limit');
      await this.#open();
      return recentRoutes(this.#ctx, n);
    });
  }

  // ------------------------------------------------------------------ EventLog

  /**
   * Appends a framed event record (fsync'd) to the session's `events.skr` under the
   * session lock: sequences are gapless across processes. Throws `not_found`,
   * `invalid_argument`, `closed`.
   */
  async append(id: string, type: string, payload: JsonValue = null): Promise<SessionEvent> {
    return this.#run(
      'append',
      async () => {
        assertId(errors, id);
        assertEventType(errors, type);
        assertJsonValue(errors, payload, 'event payload');
        await this.#open();
        const body = Buffer.from(JSON.stringify(payload), 'utf8');
        return lockForWrite(this.#ctx, id, () => appendEvent(this.#ctx, id, type, body));
      },
      id,
    );
  }

  /**
   * Events after `afterSequence` in order, at most `limit`. A torn final record is
   * ignored; a damaged record followed by more → `corrupt`. Throws `not_found`,
   * `invalid_argument`, `closed`.
   */
  async events(id: string, query?: EventQuery): Promise<SessionEvent[]> {
    return this.#run(
      'events',
      async () => {
        assertId(errors, id);
        const { afterSequence, limit } = normalizeEventQuery(errors, query);
        await this.#open();
        return readEvents(this.#ctx, id, afterSequence, limit);
      },
      id,
    );
  }

  // ------------------------------------------------------------------ Pruner

  /**
   * Keeps the newest `max` root sessions (by the index: `updatedAt` desc, then id desc,
   * archived included) and deletes the others with the normal delete semantics, one at a
   * time under each session's lock. Sub-sessions are never selected. A candidate that,
   * read under its lock, is no longer the index entry it was chosen by (written since,
   * now a sub-session, gone or unreadable) is skipped. `max <= 0` means unlimited.
   * Returns how many were deleted. Reads no transcripts.
   * Throws `invalid_argument`, `closed`.
   */
  async enforceMax(max: number): Promise<number> {
    return this.#run('enforceMax', async () => {
      assertMax(errors, max);
      if (max <= 0) return 0;
      await this.#open();
      return pruneRoots(this.#ctx, max);
    });
  }

  // ------------------------------------------------------------------ Repairer

  /**
   * Rebuilds `index.log` and every search file from the snapshots and logs. Sessions that
   * cannot be read are reported in `skippedCorrupt`, left as they are on disk and left out
   * of the index; folders without a snapshot (a create killed half-way) are ignored.
   * `indexEntriesFixed` counts entries added, corrected or removed. Safe while other
   * processes write: entries they write during the scan win. Throws `closed`.
   */
  async repair(): Promise<RepairReport> {
    return this.#run('repair', async () => {
      await this.#open();
      return rebuildIndex(this.#ctx);
    });
  }

  // ------------------------------------------------------------------ plumbing

  /** Runs a public call: `closed` after `close()`, raw failures mapped (`toStoreError`). */
  async #run<T>(what: string, fn: () => Promise<T>, id?: string): Promise<T> {
    if (this.#ctx.closed) throw errors.closed();
    try {
      return await fn();
    } catch (e) {
      throw toStoreError(e, what, this.dir, id);
    }
  }

  /** Prepares the store folder once (again after a failed attempt). */
  #open(): Promise<void> {
    if (!this.#ready) {
      this.#ready = prepareStoreFolder(this.#ctx).catch((e: unknown) => {
        this.#ready = undefined;
        throw e;
      });
    }
    return this.#ready;
  }

  #toSession(header: HeaderJson, messages: unknown[], children: string[]): Session<M> {
    return { ...headerFromJson(header), messages: messages as M[], children };
  }
}
