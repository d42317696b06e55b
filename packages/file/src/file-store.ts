import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  fdatasync,
  promises as fsp,
  fstatSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
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
import { isSessionKitError, isValidId, newSessionId } from '@sessionkit/core';
import type {
  HistoryLineage,
  ListableEntry,
  MergeSide,
  NormalizedListOptions,
} from '@sessionkit/core/adapter';
import {
  applyCommitToSummary,
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
  checkCommitExpectations,
  cloneHeader,
  cloneJson,
  committedLineage,
  compareIds,
  compareListOrder,
  createdLineage,
  ensurePrivateDir,
  errorsFor,
  extendsHistory,
  fsErrorToSessionKit,
  fsyncDir,
  isAfterCursor,
  matchesListFilters,
  nextUpdatedAt,
  normalizeEventQuery,
  normalizeLimit,
  normalizeListOptions,
  normalizeMessageWindow,
  planMerge,
  prepareCreate,
  promotedChild,
  readLineage,
  resolveRoute,
  rootLineage,
  runtimeStatusText,
  savedHeader,
  savedLineage,
  searchTextMatches,
  searchTextOf,
  selectPage,
  tempPathFor,
  windowBounds,
  withFileLock,
  writeFileAtomic,
} from '@sessionkit/core/adapter';
import { defaultFileStoreDir } from './default-dir.js';
import {
  encodeAppendBody,
  encodeMessagesBody,
  encodeSnapshotFile,
  type TabledBody,
} from './format/message-offsets.js';
import {
  applyIndexRecord,
  emptyIndex,
  type IndexState,
  listableOf,
  serializeIndex,
} from './index-log/state.js';
import {
  crc32,
  decodeHead,
  type EventMeta,
  encodeFrame,
  FORMAT_NAME,
  FORMAT_VERSION,
  type Frame,
  type FrameHead,
  frameBody,
  HEAD_BYTES,
  type HeaderJson,
  headerFromJson,
  headerProblem,
  headerToJson,
  type IndexEntryJson,
  type IndexMeta,
  type LogMeta,
  migrateLegacy,
  parseFrames,
  type SessionPaths,
  type SnapshotMeta,
  type StorePaths,
  scanSessionDir,
  sessionPaths,
  storePaths,
  summaryFromEntry,
  TAIL_BYTES,
  TAIL_MAGIC,
} from './layout.js';
import { spliceFold } from './session/fold.js';
import { readWindowOnce } from './session/window-read.js';
import { type Fd, openFd, replaceFileNoSync } from './sync-fd.js';

const errors = errorsFor('file');

/** Options of `new FileStore(options)`. Unknown keys are rejected with `invalid_argument`. */
export interface FileStoreOptions {
  /**
   * The store folder (created 0700 if missing; an existing folder keeps its mode).
   * Relative paths are resolved against the working directory.
   * Default: `defaultFileStoreDir()`.
   */
  dir?: string | undefined;
  /**
   * Commits between full snapshots of a session: a load replays at most this many log
   * records, or as many bytes as the snapshot holds, whichever is more. Snapshots are only
   * taken once the log has grown as large as the snapshot, so their cost amortises to a
   * constant per appended byte (each byte is rewritten about once). Default 100.
   */
  snapshotEvery?: number | undefined;
  /** How long a write waits for a session's lock before `unavailable`. Default 10 000 ms. */
  lockTimeoutMs?: number | undefined;
  /**
   * A lock file not refreshed for this long is considered abandoned and broken (a live
   * holder refreshes it every third of this). Locks of dead processes on this host are
   * broken at once; this bounds the wait for a lock a process was killed while taking
   * (its file is still empty, so its owner is unknown). Default 5 000 ms.
   */
  lockStaleMs?: number | undefined;
  /**
   * `index.log` is compacted (rewritten with one entry per session) once it has grown past
   * twice its size after the last compaction plus this many bytes. Default 4 MiB.
   */
  indexSlackBytes?: number | undefined;
  /**
   * fsync every write before it resolves (the durability guarantee). `false` is for bulk
   * loads and benchmarks: a crash of the machine (not of the process) may then lose
   * acknowledged writes. Default true.
   */
  sync?: boolean | undefined;
}

/** Every key of `FileStoreOptions` (internal: the URL adapter accepts all but `dir`). */
export const OPTION_KEYS = [
  'dir',
  'snapshotEvery',
  'lockTimeoutMs',
  'lockStaleMs',
  'indexSlackBytes',
  'sync',
] as const;
const DEFAULT_SNAPSHOT_EVERY = 100;
/** A log this large is always folded into a new snapshot (unless the snapshot is larger). */
const LOG_FOLD_BYTES = 8 * 1024 * 1024;
/** The index log is compacted when it grows past twice its live size plus this. */
const INDEX_SLACK_BYTES = 4 * 1024 * 1024;
/** How often a reader retries when a snapshot is replaced under it. */
const READ_ATTEMPTS = 50;

/** What a writer needs of a session without reading its messages. */
interface Head {
  header: HeaderJson;
  /** Merge lineage (core's `HistoryLineage`) after the last record. */
  lineage: HistoryLineage;
  messageCount: number;
  snapRev: number;
  /** The snapshot has a message-offset table (format 3): windows need not read it whole. */
  tabled: boolean;
  /** Inode of the snapshot file (a deleted and re-created session gets a new one). */
  snapIno: number;
  snapBytes: number;
  /** Inode of the commit log, 0 when there is none. */
  logIno: number;
  /** End of the last good record of the log. */
  logSize: number;
  /** Bytes actually in the log file (> logSize when it ends in a torn append). */
  logFileSize: number;
  logRecords: number;
  /**
   * The last log record's body was checked (a writer's read, or this store wrote it).
   * Readers take the last record from its head and meta alone; a writer trusts only a
   * verified head, so it never appends after a record a power loss left half-written.
   */
  verified: boolean;
}

/** What `#readSnapshotMeta` reads of a snapshot. */
interface SnapshotInfo {
  meta: SnapshotMeta;
  bytes: number;
  tabled: boolean;
}

/** The full stored state of a session. */
interface Loaded {
  header: HeaderJson;
  lineage: HistoryLineage;
  messages: unknown[];
}

interface RouterState {
  v: number;
  bindings: { sessionId: string; channel: string; chatKey: string; thread: string; at: number }[];
  follows: { channel: string; chatKey: string; target: string }[];
  last: number;
}

/** `fs.fdatasync` as a promise: one thread-pool round trip. */
const fdatasyncAsync = (fd: number) =>
  new Promise<void>((resolvePromise, reject) =>
    fdatasync(fd, (e) => (e ? reject(e) : resolvePromise())),
  );

/** Writes all of `data` at the file's position (the end, for an `O_APPEND` descriptor). */
function writeAll(fd: number, data: Uint8Array): void {
  let done = 0;
  while (done < data.length) done += writeSync(fd, data, done, data.length - done);
}

/** Append descriptors a store keeps open at most (commit logs, search files, the index). */
const KEPT_FILES = 32;

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // nothing held any more
  }
}

let ownPidNamespace: string | undefined | null = null;
/** This process's pid namespace (`/proc/self/ns/pid`), as core's lock files record it. */
function pidNamespace(): string | undefined {
  if (ownPidNamespace === null) {
    try {
      ownPidNamespace = readlinkSync('/proc/self/ns/pid');
    } catch {
      ownPidNamespace = undefined;
    }
  }
  return ownPidNamespace;
}

const isEnoent = (e: unknown) => (e as { code?: unknown } | null)?.code === 'ENOENT';

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
   */
  readonly stats = { transcriptReads: 0, transcriptBytesRead: 0 };
  readonly #paths: StorePaths;
  readonly #snapshotEvery: number;
  readonly #lockOptions: { timeoutMs: number; staleMs: number };
  readonly #sync: boolean;
  #closed = false;
  #ready: Promise<void> | undefined;
  readonly #heads = new Map<string, Head>();
  readonly #eventTails = new Map<string, { ino: number; size: number; sequence: number }>();
  #index: IndexState = emptyIndex();
  #indexCompactedSize = 0;
  #compactDue = false;
  readonly #indexSlack: number;
  /** True while this store rewrites the index (it holds the index lock). */
  #replacing = false;
  /** Session locks held by this store right now (the index rewrite must not re-take them). */
  readonly #held = new Set<string>();
  /** Sessions whose index record was appended under the lock held right now (`#lock`). */
  readonly #indexed = new Set<string>();
  /**
   * Sessions whose `search.txt` missed a turn because appending to it failed after the
   * commit was durable: the next commit of this store rewrites it whole (`repair()` too).
   */
  readonly #searchStale = new Set<string>();
  /**
   * Append descriptors kept open between writes (commit logs, search files, the index),
   * by path, least recently used first. A descriptor is taken out while in use (`#takeFile`)
   * and put back after (`#keepFile`), so `close()` never closes one under a pending
   * `fdatasync`. Each is used only after checking that its inode is still the file at its
   * path (see the callers).
   */
  readonly #files = new Map<string, { fd: number; ino: number }>();
  /** Path sets of recently used sessions (pure strings: never stale). */
  readonly #spCache = new Map<string, SessionPaths>();

  /**
   * A store over `options.dir` (default `defaultFileStoreDir()`). Creates nothing until
   * the first call. Throws `invalid_argument` for unknown or bad options.
   */
  constructor(options: FileStoreOptions = {}) {
    assertKnownKeys(errors, options, OPTION_KEYS, 'FileStore options');
    const dir = options.dir ?? defaultFileStoreDir();
    if (typeof dir !== 'string' || dir === '' || dir.includes('\u0000')) {
      throw errors.invalid('FileStore: dir must be a non-empty path');
    }
    const every = options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
    if (!Number.isSafeInteger(every) || every < 1) {
      throw errors.invalid(`FileStore: snapshotEvery must be a positive integer, got ${every}`);
    }
    const timeout = options.lockTimeoutMs ?? 10_000;
    if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0) {
      throw errors.invalid(`FileStore: lockTimeoutMs must be a number >= 0, got ${timeout}`);
    }
    const stale = options.lockStaleMs ?? 5_000;
    if (typeof stale !== 'number' || !Number.isFinite(stale) || stale < 100) {
      throw errors.invalid(`FileStore: lockStaleMs must be a number >= 100, got ${stale}`);
    }
    const slack = options.indexSlackBytes ?? INDEX_SLACK_BYTES;
    if (!Number.isSafeInteger(slack) || slack < 0) {
      throw errors.invalid(`FileStore: indexSlackBytes must be an integer >= 0, got ${slack}`);
    }
    this.#indexSlack = slack;
    if (options.sync !== undefined && typeof options.sync !== 'boolean') {
      throw errors.invalid('FileStore: sync must be a boolean');
    }
    this.dir = resolve(dir);
    this.#paths = storePaths(this.dir);
    this.#snapshotEvery = every;
    this.#lockOptions = { timeoutMs: timeout, staleMs: stale };
    this.#sync = options.sync ?? true;
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
      const { messages, children: _c, ...rest } = prepared;
      const header = headerToJson(rest);
      const lineage = createdLineage(rest, await this.#parentLineage(rest.parentId));
      await this.#lock(prepared.id, () => this.#createLocked(header, lineage, messages));
      return this.#toSession(header, cloneJson(messages), await this.#childrenOf(header.id));
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
        const { header, messages } = await this.#readFull(id);
        return this.#toSession(header, messages, await this.#childrenOf(id));
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
        const header = await this.#lock(id, async () => {
          const head = await this.#readHead(id, true);
          const stored = head.header;
          if (session.revision !== stored.revision) {
            throw errors.conflict(id, session.revision, stored.revision);
          }
          const next = headerToJson(
            savedHeader(headerFromJson(stored), session as Session<unknown>),
          );
          // A save is O(history) anyway: the stored messages decide whether it extends them.
          const before = await this.#readFull(id);
          const lineage = savedLineage(before.lineage, extendsHistory(before.messages, messages));
          await this.#writeSnapshot(id, next, lineage, messages);
          await this.#writeSearch(id, messages);
          await this.#indexAppend(
            [{ v: FORMAT_VERSION, op: 'put', entry: entryOf(next, messages.length) }],
            id,
          );
          return next;
        });
        return this.#toSession(header, cloneJson(messages), await this.#childrenOf(id));
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
        if (!(await this.#remove(id))) throw errors.notFound(id);
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
      const index = await this.#refreshIndex();
      let page: (ListableEntry & { entry: IndexEntryJson })[];
      if (opts.query === undefined) {
        page = selectPage(index.listable.values(), opts);
      } else {
        page = await this.#searchPage(index, opts);
      }
      const children = this.#childrenMap(index);
      return page.map((l) =>
        summaryFromEntry(structuredClone(l.entry), [...(children.get(l.id) ?? [])]),
      );
    });
  }

  /**
   * Marks the store closed: later calls fail with `closed`. Closes the kept append
   * descriptors (a commit still running closes its own when it finishes) and drops the
   * caches. Idempotent.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const path of [...this.#files.keys()]) this.#dropFile(path);
    this.#heads.clear();
    this.#eventTails.clear();
    this.#index = emptyIndex();
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
        return this.#lock(id, async () => {
          const head = await this.#readHead(id, true);
          checkCommitExpectations(
            errors,
            id,
            { revision: head.header.revision, messageCount: head.messageCount },
            input,
          );
          const now = nextUpdatedAt(new Date(head.header.updatedAt));
          const { messageCount, ...summary } = applyCommitToSummary(
            { ...headerFromJson(head.header), messageCount: head.messageCount },
            input as CommitInput<unknown>,
            now,
            errors,
          );
          const header = headerToJson(summary);
          const lineage = committedLineage(head.lineage, input as CommitInput<unknown>);
          let indexed: Buffer | undefined;
          if (replace) {
            await this.#writeSnapshot(id, header, lineage, replace);
            await this.#writeSearch(id, replace);
          } else {
            // The search text and the index record are prepared while the log's fdatasync
            // runs; the index record is still appended only once the commit is durable.
            const next = { header, lineage, messageCount };
            await this.#appendLog(id, head, next, append ?? [], 'commit', () => {
              if (append && append.length > 0 && !this.#searchStale.has(id)) {
                try {
                  this.#appendSearch(id, append);
                } catch {
                  // Derived data: the commit itself goes on and is durable. The search
                  // text is rewritten whole below (or by the next commit, or `repair()`).
                  this.#searchStale.add(id);
                }
              }
              indexed = encodeFrame({
                v: FORMAT_VERSION,
                op: 'put',
                entry: entryOf(header, messageCount),
              } satisfies IndexMeta);
            });
          }
          await this.#indexAppend(
            indexed ?? [{ v: FORMAT_VERSION, op: 'put', entry: entryOf(header, messageCount) }],
            id,
          );
          if (this.#searchStale.has(id)) await this.#rewriteSearch(id);
          return { revision: header.revision, messageCount, updatedAt: new Date(now.getTime()) };
        });
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
        const { header, messages } = await this.#lock(parentId, async () => {
          const parent = await this.#readFull(parentId);
          assertBranchPoint(errors, parentId, atTurn, parent.messages.length);
          const parentHeader = headerFromJson(parent.header);
          const child = headerToJson(branchHeader(parentHeader, await this.#freshId(), atTurn));
          const lineage = branchedLineage(parentHeader, parent.lineage);
          const copied = parent.messages.slice(0, atTurn);
          await this.#lock(child.id, () => this.#createLocked(child, lineage, copied));
          return { header: child, messages: copied };
        });
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
        const source = await this.#readFull(id);
        const header = headerToJson(
          cloneHeader(headerFromJson(source.header), await this.#freshId()),
        );
        await this.#lock(header.id, () =>
          this.#createLocked(header, rootLineage(), source.messages),
        );
        return this.#toSession(header, source.messages, []);
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
        for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
          const parentId = (await this.#readHead(childId, false)).header.parentId;
          if (parentId === undefined) {
            throw errors.invalid(
              `merge: session "${childId}" has no parent to merge into`,
              childId,
            );
          }
          const done = await this.#lock(parentId, () => this.#mergeLocked(childId, parentId));
          // The child was promoted to another parent meanwhile: merge into that one.
          if (done === undefined) continue;
          return this.#toSession(done.header, done.messages, await this.#childrenOf(parentId));
        }
        throw errors.unavailable(`merge: session "${childId}" kept being re-parented`);
      },
      childId,
    );
  }

  /** The merge itself, under the parent's lock; `undefined` when the child moved. */
  async #mergeLocked(
    childId: string,
    parentId: string,
  ): Promise<{ header: HeaderJson; messages: unknown[] } | undefined> {
    // The child is read under the parent's lock (a lockless, consistent read).
    const child = await this.#readFull(childId);
    if (child.header.parentId !== parentId) return undefined;
    const head = await this.#readHead(parentId, true);
    const plan = planMerge(
      errors,
      {
        header: headerFromJson(head.header),
        lineage: head.lineage,
        messageCount: head.messageCount,
      },
      { header: headerFromJson(child.header), lineage: child.lineage },
    );
    const next = headerToJson(plan.header);
    await this.#writeSnapshot(parentId, next, plan.lineage, child.messages);
    await this.#writeSearch(parentId, child.messages);
    await this.#indexAppend(
      [{ v: FORMAT_VERSION, op: 'put', entry: entryOf(next, child.messages.length) }],
      parentId,
    );
    return { header: next, messages: child.messages };
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
    if (normalized.kind !== 'all') {
      // The window read below is a few synchronous system calls (fast, and one snapshot
      // of the files); yield to the event loop first, as an asynchronous read would, so a
      // caller polling windows in a loop never starves timers and I/O.
      await new Promise<void>((resolve) => setImmediate(resolve));
      for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
        const got = readWindowOnce(id, this.#sp(id), normalized, this.stats);
        if (got === 'missing') throw errors.notFound(id);
        if (got === 'retry') continue;
        if (got === 'fallback') break;
        this.stats.transcriptReads++;
        const { messages, offset, messageCount, header } = got;
        return { messages: messages as M[], offset, messageCount, revision: header.revision };
      }
    }
    const full = await this.#readFull(id);
    const { start, end } = windowBounds(normalized, full.messages.length);
    return {
      messages: (start === 0 && end === full.messages.length
        ? full.messages
        : full.messages.slice(start, end)) as M[],
      offset: start,
      messageCount: full.messages.length,
      revision: full.header.revision,
    };
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
        const sp = this.#sp(id);
        await this.#lock(id, async () => {
          await this.#assertExists(id);
          await this.#writeAtomic(sp.status, text);
        });
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
        await this.#assertExists(id);
        let text: string;
        try {
          text = await fsp.readFile(this.#sp(id).status, 'utf8');
        } catch (e) {
          if (isEnoent(e)) {
            await this.#assertExists(id);
            return null;
          }
          throw e;
        }
        try {
          return JSON.parse(text) as JsonValue;
        } catch (cause) {
          throw errors.corrupt(id, 'status.json is not valid JSON', cause);
        }
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
        await this.#assertExists(sessionId);
        await this.#routerUpdate((state) => {
          const at = routerNow(state);
          const kept = state.bindings.filter(
            (b) => !(b.channel === channel && b.chatKey === chatKey && b.thread === thread),
          );
          kept.push({ sessionId, channel, chatKey, thread, at });
          state.bindings = kept;
        });
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
      const state = await this.#routerRead();
      const pin = state.follows.find((f) => f.channel === channel && f.chatKey === chatKey);
      const bound = state.bindings.find(
        (b) => b.channel === channel && b.chatKey === chatKey && b.thread === thread,
      );
      return resolveRoute(pin?.target, liveSessionId, bound?.sessionId);
    });
  }

  /** Removes the binding; a missing one is not an error. Throws `invalid_argument`, `closed`. */
  async unbind(channel: string, chatKey: string, thread: string): Promise<void> {
    return this.#run('unbind', async () => {
      assertRouterTuple(errors, 'unbind', channel, chatKey, thread);
      await this.#open();
      await this.#routerUpdate((state) => {
        state.bindings = state.bindings.filter(
          (b) => !(b.channel === channel && b.chatKey === chatKey && b.thread === thread),
        );
      });
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
      await this.#routerUpdate((state) => {
        state.follows = state.follows.filter(
          (f) => !(f.channel === channel && f.chatKey === chatKey),
        );
        if (target !== '') state.follows.push({ channel, chatKey, target });
      });
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
      await this.#routerUpdate((state) => {
        const b = state.bindings.find(
          (x) => x.channel === channel && x.chatKey === chatKey && x.thread === thread,
        );
        if (b) b.at = routerNow(state);
      });
    });
  }

  /** Bindings, newest first; `limit` absent or 0 → 50, at most 1000. Throws `invalid_argument`, `closed`. */
  async recent(limit?: number): Promise<RouterRow[]> {
    return this.#run('recent', async () => {
      const n = normalizeLimit(errors, limit, 'recent: limit');
      await this.#open();
      const state = await this.#routerRead();
      const key = (b: RouterState['bindings'][number]) => ({
        updatedAt: b.at,
        id: JSON.stringify([b.channel, b.chatKey, b.thread]),
      });
      return [...state.bindings]
        .sort((a, b) => compareListOrder(key(a), key(b), false))
        .slice(0, n)
        .map((b) => ({
          sessionId: b.sessionId,
          channel: b.channel,
          chatKey: b.chatKey,
          thread: b.thread,
          updatedAt: new Date(b.at),
        }));
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
        return this.#lock(id, async () => {
          const head = await this.#readHead(id, true);
          const path = this.#sp(id).events;
          const handle = openFd(path, 'a', 0o600);
          try {
            const st = await handle.stat();
            const last = await this.#lastEventSequence(id, path, Number(st.ino), st.size);
            const meta: EventMeta = {
              v: FORMAT_VERSION,
              sequence: last.sequence + 1,
              revision: head.header.revision,
              at: Date.now(),
              type,
            };
            if (last.validEnd < st.size) await handle.truncate(last.validEnd);
            const frame = encodeFrame(meta, body);
            await handle.write(frame);
            if (this.#sync) await handle.datasync();
            this.#eventTails.set(id, {
              ino: Number(st.ino),
              size: last.validEnd + frame.length,
              sequence: meta.sequence,
            });
            return {
              sequence: meta.sequence,
              revision: meta.revision,
              at: new Date(meta.at),
              type,
              payload: JSON.parse(body.toString('utf8')) as JsonValue,
            };
          } finally {
            await handle.close();
          }
        });
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
        await this.#assertExists(id);
        let buf: Buffer;
        try {
          buf = await fsp.readFile(this.#sp(id).events);
        } catch (e) {
          if (!isEnoent(e)) throw e;
          await this.#assertExists(id);
          return [];
        }
        const parsed = parseFrames<EventMeta>(buf);
        if (parsed.corrupt) throw errors.corrupt(id, `events.skr: ${parsed.corrupt}`);
        const out: SessionEvent[] = [];
        for (const f of parsed.frames) {
          if (f.meta.sequence <= afterSequence) continue;
          out.push({
            sequence: f.meta.sequence,
            revision: f.meta.revision,
            at: new Date(f.meta.at),
            type: f.meta.type,
            payload: (frameBody(buf, f) ?? null) as JsonValue,
          });
          if (limit !== undefined && out.length >= limit) break;
        }
        return out;
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
      const index = await this.#refreshIndex();
      const roots = [...index.entries.values()].filter((e) => e.parentId === undefined);
      roots.sort((a, b) => compareListOrder(a, b, false));
      let deleted = 0;
      // Each candidate is re-checked under its lock (`#remove`): one written, re-parented or
      // deleted since the index was read is skipped.
      for (const entry of roots.slice(max)) if (await this.#remove(entry.id, entry)) deleted++;
      return deleted;
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
      return this.#rebuild();
    });
  }

  // ------------------------------------------------------------------ internals: plumbing

  async #run<T>(what: string, fn: () => Promise<T>, id?: string): Promise<T> {
    if (this.#closed) throw errors.closed();
    try {
      return await fn();
    } catch (e) {
      if (isSessionKitError(e)) throw e;
      const mapped = fsErrorToSessionKit(
        errors,
        e,
        `${what}${id ? ` "${id}"` : ''} in ${this.dir}`,
      );
      if (isSessionKitError(mapped)) throw mapped;
      if (e instanceof SyntaxError && id) throw errors.corrupt(id, e.message, e);
      // Stored values are at most 512 levels deep (checked before every write); a value
      // stored by an older version that is too deep to handle is damage, not a crash.
      if (e instanceof RangeError && id) throw errors.corrupt(id, e.message, e);
      throw e;
    }
  }

  #open(): Promise<void> {
    if (!this.#ready) {
      this.#ready = this.#init().catch((e: unknown) => {
        this.#ready = undefined;
        throw e;
      });
    }
    return this.#ready;
  }

  async #init(): Promise<void> {
    const p = this.#paths;
    try {
      await ensurePrivateDir(p.root);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === 'EEXIST' || code === 'ENOTDIR') {
        throw errors.make('invalid_argument', `store folder ${p.root} is not a folder`, {
          cause: e,
        });
      }
      throw e;
    }
    await ensurePrivateDir(p.sessions);
    await ensurePrivateDir(p.locks);
    await ensurePrivateDir(p.trash);
    const version = await this.#formatVersion();
    if (version === FORMAT_VERSION) return;
    await withFileLock(
      p.formatLock,
      async () => {
        const again = await this.#formatVersion();
        if (again === FORMAT_VERSION) return;
        // Older (or absent) format: sessions written by format 1 are read in place and
        // migrated on their next write; the index is rebuilt from them.
        if (again !== undefined) await this.#rebuild();
        // A new store: the index exists from the start, so a missing index later means
        // damage, which the next reader repairs (see `#refreshIndex`).
        else await (await fsp.open(p.index, 'a', 0o600)).close();
        await writeFileAtomic(
          p.format,
          `${JSON.stringify({ format: FORMAT_NAME, version: FORMAT_VERSION })}\n`,
        );
      },
      this.#lockOptions,
    );
  }

  async #formatVersion(): Promise<number | undefined> {
    let text: string;
    try {
      text = await fsp.readFile(this.#paths.format, 'utf8');
    } catch (e) {
      if (isEnoent(e)) return undefined;
      throw e;
    }
    let parsed: { format?: unknown; version?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch (cause) {
      throw errors.make('corrupt', `${this.#paths.format} is not valid JSON`, { cause });
    }
    if (parsed.format !== FORMAT_NAME || typeof parsed.version !== 'number') {
      throw errors.invalid(
        `${this.dir} is not a sessionkit file store (format.json says otherwise)`,
      );
    }
    if (parsed.version > FORMAT_VERSION) {
      throw errors.make(
        'corrupt',
        `${this.dir} has format version ${parsed.version}, newer than this package reads (${FORMAT_VERSION}) — upgrade @sessionkit/file`,
      );
    }
    return parsed.version;
  }

  /** Atomic replace of `path`: fsync'd (file and folder) unless the store is `sync: false`. */
  async #writeAtomic(path: string, data: string | Uint8Array): Promise<void> {
    if (this.#sync) await writeFileAtomic(path, data);
    else replaceFileNoSync(path, tempPathFor(path), data);
  }

  #sp(id: string): SessionPaths {
    let sp = this.#spCache.get(id);
    if (!sp) {
      if (this.#spCache.size >= 1024) this.#spCache.clear();
      sp = sessionPaths(this.#paths, id);
      this.#spCache.set(id, sp);
    }
    return sp;
  }

  /**
   * Takes the kept descriptor of `path` out of the cache (the caller owns it until
   * `#keepFile` or `closeSync`) if its inode is `ino`; a descriptor of another inode (the
   * file was replaced or removed) is closed. `undefined` when there is none.
   */
  #takeFile(path: string, ino: number): number | undefined {
    const f = this.#files.get(path);
    if (!f) return undefined;
    this.#files.delete(path);
    if (f.ino === ino) return f.fd;
    closeQuietly(f.fd);
    return undefined;
  }

  /** Returns a descriptor to the cache (or closes it: store closed, Windows, cache full). */
  #keepFile(path: string, fd: number, ino: number): void {
    this.#dropFile(path);
    if (this.#closed || process.platform === 'win32') {
      closeQuietly(fd);
      return;
    }
    this.#files.set(path, { fd, ino });
    if (this.#files.size > KEPT_FILES) {
      const oldest = this.#files.keys().next().value as string;
      this.#dropFile(oldest);
    }
  }

  /** True when this store keeps `path` open as inode `ino` (so that number is not reused). */
  #pinned(path: string, ino: number): boolean {
    return this.#files.get(path)?.ino === ino;
  }

  #dropFile(path: string): void {
    const f = this.#files.get(path);
    if (!f) return;
    this.#files.delete(path);
    closeQuietly(f.fd);
  }

  /**
   * Runs `fn` under the session's lock file. Before releasing it, when `fn` appended no
   * index record for the session (a runtime status, an event, a branch of it, a write that
   * failed), makes sure the index entry matches the session's head: a writer killed after
   * its data was durable but before its index record leaves only its lock file behind,
   * which is what makes listing read the head, so whoever removes that lock must first
   * append the missing entry. Compacts the index afterwards when due (best-effort: the
   * write is done and durable; a failed compaction is retried after a later write).
   */
  async #lock<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const result = await withFileLock(
      this.#sp(id).lock,
      async () => {
        this.#held.add(id);
        this.#indexed.delete(id);
        try {
          return await fn();
        } finally {
          try {
            if (!this.#indexed.has(id)) await this.#syncIndexEntry(id);
          } catch {
            // best-effort: the lock file is still ours until we return, listing stays right
            // for as long as it exists, and `repair()` fixes any entry left stale
          }
          this.#indexed.delete(id);
          this.#held.delete(id);
        }
      },
      this.#lockOptions,
    );
    if (this.#compactDue && this.#held.size === 0 && !this.#replacing) {
      this.#compactDue = false;
      try {
        await this.#compactIndex();
      } catch {
        // The index is a cache and its compaction an optimisation: never fail a durable
        // write for it (e.g. `.index.lock` busy in another process). Try again later.
        this.#compactDue = true;
      }
    }
    return result;
  }

  /**
   * Appends the session's head to the index when the index entry differs from it (or a
   * `del` when the session is gone). The caller holds the session's lock, so the head is
   * the truth and the record lands in write order. Reads metas only.
   */
  async #syncIndexEntry(id: string): Promise<void> {
    const state = this.#readIndexTail();
    if (typeof state === 'string') return; // missing or damaged: the next reader rebuilds it
    let entry: IndexEntryJson | undefined;
    try {
      const head = await this.#readHead(id, false);
      entry = entryOf(head.header, head.messageCount);
    } catch (e) {
      if (isSessionKitError(e, 'corrupt')) return; // left as is: repair() reports it
      if (!isSessionKitError(e, 'not_found')) throw e;
    }
    const current = state.entries.get(id);
    if (entry === undefined) {
      if (current) await this.#indexAppend([{ v: FORMAT_VERSION, op: 'del', id }], id);
      return;
    }
    if (current && isDeepStrictEqual(jsonCopy(current), jsonCopy(entry))) return;
    await this.#indexAppend([{ v: FORMAT_VERSION, op: 'put', entry }], id);
  }

  async #freshId(): Promise<string> {
    for (;;) {
      const id = newSessionId();
      try {
        await fsp.stat(this.#sp(id).dir);
      } catch (e) {
        if (isEnoent(e)) return id;
        throw e;
      }
    }
  }

  #toSession(header: HeaderJson, messages: unknown[], children: string[]): Session<M> {
    return { ...headerFromJson(header), messages: messages as M[], children };
  }

  async #assertExists(id: string): Promise<void> {
    let names: string[];
    try {
      names = await fsp.readdir(this.#sp(id).dir);
    } catch (e) {
      if (isEnoent(e)) throw errors.notFound(id);
      throw e;
    }
    const scan = scanSessionDir(names);
    if (scan.snapshots.length === 0 && !scan.legacy) throw errors.notFound(id);
  }

  // ------------------------------------------------------------------ internals: sessions

  /**
   * The lineage of the session `parentId` names, `undefined` when there is none or it
   * does not exist (core's `createdLineage` then bases on 0). Reads metas only.
   */
  async #parentLineage(parentId: string | undefined): Promise<HistoryLineage | undefined> {
    if (parentId === undefined || !isValidId(parentId)) return undefined;
    try {
      return (await this.#readHead(parentId, false)).lineage;
    } catch (e) {
      if (isSessionKitError(e, 'not_found') || isSessionKitError(e, 'corrupt')) return undefined;
      throw e;
    }
  }

  /** Creates the session folder and its first snapshot; the caller holds the session lock. */
  async #createLocked(
    header: HeaderJson,
    lineage: HistoryLineage,
    messages: unknown[],
  ): Promise<void> {
    const id = header.id;
    const sp = this.#sp(id);
    let names: string[] = [];
    try {
      names = readdirSync(sp.dir);
    } catch (e) {
      if (!isEnoent(e)) throw e;
    }
    const scan = scanSessionDir(names);
    if (scan.snapshots.length > 0 || scan.legacy) throw errors.exists(id);
    // A commit log without its snapshot is a damaged session, not left-overs: keep it.
    if (scan.logs.length > 0) throw missingSnapshot(id, scan.logs);
    // Left-overs of a create killed before its snapshot: start clean.
    for (const name of names) await fsp.rm(join(sp.dir, name), { force: true, recursive: true });
    await ensurePrivateDir(sp.dir);
    if (this.#sync) await fsyncDir(this.#paths.sessions);
    await this.#writeSnapshot(id, header, lineage, messages);
    await this.#writeSearch(id, messages);
    await this.#indexAppend(
      [{ v: FORMAT_VERSION, op: 'put', entry: entryOf(header, messages.length) }],
      id,
    );
  }

  /**
   * Writes `snap-<revision>.skr` (the snapshot frame and its message-offset table; temp +
   * fsync + rename + folder fsync), then removes older snapshots and logs, which it makes
   * redundant.
   */
  async #writeSnapshot(
    id: string,
    header: HeaderJson,
    lineage: HistoryLineage,
    messages: unknown[] | TabledBody,
  ): Promise<void> {
    const sp = this.#sp(id);
    const rev = header.revision;
    const tabled = Array.isArray(messages) ? encodeMessagesBody(messages) : messages;
    const count = tabled.count;
    const meta: SnapshotMeta = {
      v: FORMAT_VERSION,
      kind: 'snapshot',
      header,
      messageCount: count,
      lineage,
    };
    const frame = encodeSnapshotFile(meta, tabled);
    this.#markSuperseded(sp, rev);
    await this.#writeAtomic(sp.snapshot(rev), frame);
    const old = this.#heads.get(id);
    if (old) this.#dropFile(sp.log(old.snapRev));
    this.#heads.set(id, {
      header,
      lineage,
      messageCount: count,
      snapRev: rev,
      tabled: true,
      snapIno: Number(statSync(sp.snapshot(rev)).ino),
      snapBytes: frame.length,
      logIno: 0,
      logSize: 0,
      logFileSize: 0,
      logRecords: 0,
      verified: true,
    });
    await this.#removeOlder(sp, rev);
  }

  /**
   * Clears the owner-write bit (snapshots are never written after creation, so it is
   * otherwise always set) of every snapshot older than `rev`, BEFORE the new snapshot is
   * renamed into place: a writer in another process that cached the old snapshot's head
   * sees the mark in its `stat` and re-lists the folder (`#currentHead`), even when this
   * writer dies before removing the old files. A mark left by such a crash on the still
   * newest snapshot only turns that check off for the session until its next snapshot;
   * readers need no write permission. Not on Windows, where a read-only file cannot be
   * unlinked (the cached-head check is off there).
   */
  #markSuperseded(sp: SessionPaths, rev: number): void {
    if (process.platform === 'win32') return;
    let names: string[];
    try {
      names = readdirSync(sp.dir);
    } catch (e) {
      if (isEnoent(e)) return;
      throw e;
    }
    for (const r of scanSessionDir(names).snapshots) {
      if (r >= rev) continue;
      try {
        chmodSync(sp.snapshot(r), 0o400);
      } catch (e) {
        if (!isEnoent(e)) throw e;
      }
    }
  }

  async #removeOlder(sp: SessionPaths, rev: number): Promise<void> {
    let names: string[];
    try {
      names = readdirSync(sp.dir);
    } catch (e) {
      if (isEnoent(e)) return;
      throw e;
    }
    const scan = scanSessionDir(names);
    for (const r of scan.snapshots) if (r < rev) await fsp.rm(sp.snapshot(r), { force: true });
    for (const r of scan.logs) if (r < rev) await fsp.rm(sp.log(r), { force: true });
    if (scan.legacy) await fsp.rm(sp.legacy, { force: true });
  }

  /**
   * Appends one record to the current log (truncating a torn tail first) and fsyncs it;
   * folds the log into a new snapshot when it has grown enough. Caller holds the lock.
   */
  async #appendLog(
    id: string,
    head: Head,
    after: { header: HeaderJson; lineage: HistoryLineage; messageCount: number },
    appended: unknown[],
    kind: LogMeta['kind'],
    whileSyncing?: () => void,
  ): Promise<void> {
    const sp = this.#sp(id);
    const { header, lineage, messageCount } = after;
    const encoded = appended.length > 0 ? encodeAppendBody(appended) : undefined;
    const meta: LogMeta = {
      v: FORMAT_VERSION,
      kind,
      seq: head.logRecords + 1,
      header,
      messageCount,
      appended: appended.length,
      lineage,
    };
    if (encoded) meta.sizes = encoded.sizes;
    const frame = encodeFrame(meta, encoded?.body);
    // Synchronous open/write/close (microseconds on a local disk) and one thread-pool hop
    // for the fdatasync. The caller holds the lock and has just checked the log's inode
    // (`#readHead`), so no other writer can have replaced it: a known inode needs no fstat.
    // The descriptor is kept open for the next commit (`#takeFile` hands it back only for
    // the same inode).
    const path = sp.log(head.snapRev);
    const kept = head.logIno !== 0 ? this.#takeFile(path, head.logIno) : undefined;
    const fd = kept ?? openSync(path, 'a', 0o600);
    let ino = head.logIno;
    // `whileSyncing` (derived data: the search file) runs on this thread while the
    // fdatasync runs in the pool; its error is reported once the record is durable and
    // the cached head is current.
    let sideError: { e: unknown } | undefined;
    try {
      if (head.logFileSize > head.logSize) ftruncateSync(fd, head.logSize);
      writeAll(fd, frame);
      if (ino === 0) ino = Number(fstatSync(fd).ino);
      const syncing = this.#sync ? fdatasyncAsync(fd) : undefined;
      try {
        whileSyncing?.();
      } catch (e) {
        sideError = { e };
      }
      await syncing; // undefined when `sync: false`
    } catch (e) {
      closeQuietly(fd);
      throw e;
    }
    this.#keepFile(path, fd, ino);
    if (head.logIno === 0 && this.#sync) await fsyncDir(sp.dir);
    const next: Head = {
      header,
      lineage,
      messageCount,
      snapRev: head.snapRev,
      tabled: head.tabled,
      snapIno: head.snapIno,
      snapBytes: head.snapBytes,
      logIno: ino,
      logSize: head.logSize + frame.length,
      logFileSize: head.logSize + frame.length,
      logRecords: meta.seq,
      verified: true,
    };
    this.#heads.set(id, next);
    const logBytes = next.logSize;
    // A snapshot of an older format (no offset table) is upgraded by the first commit.
    const fold =
      kind === 'commit' &&
      header.revision > head.snapRev &&
      (!next.tabled ||
        (next.logRecords >= this.#snapshotEvery && logBytes >= next.snapBytes) ||
        logBytes >= Math.max(next.snapBytes, LOG_FOLD_BYTES));
    if (fold) {
      // The record is durable: a fold that fails (a full disk, a damaged older record) must
      // not report the commit as failed. The log stays as it is and a later commit folds.
      try {
        const spliced = this.#spliceFold(id, next);
        if (spliced) {
          await this.#writeSnapshot(id, spliced.header, spliced.lineage, spliced.tabled);
        } else {
          const full = await this.#readFull(id);
          await this.#writeSnapshot(id, full.header, full.lineage, full.messages);
        }
      } catch {
        this.#heads.delete(id); // the next write re-reads the folder
      }
    }
    if (sideError) throw sideError.e;
  }

  /**
   * The snapshot and log of `head` spliced into one snapshot body with its offset table
   * (`spliceFold`); `undefined` when they cannot be (the caller folds through a full
   * load). Caller holds the session lock (the files cannot change).
   */
  #spliceFold(
    id: string,
    head: Head,
  ): { header: HeaderJson; lineage: HistoryLineage; tabled: TabledBody } | undefined {
    const sp = this.#sp(id);
    let snapBuf: Buffer;
    let logBuf: Buffer;
    try {
      snapBuf = readFileSync(sp.snapshot(head.snapRev));
      logBuf = readFileSync(sp.log(head.snapRev));
    } catch {
      return undefined;
    }
    this.stats.transcriptReads++;
    this.stats.transcriptBytesRead += snapBuf.length + logBuf.length;
    return spliceFold(id, snapBuf, logBuf, head);
  }

  /**
   * The header and log position of a session, reading only the snapshot's meta and the
   * last log record (cached by the log's inode and size; a writer under the lock checks
   * its cached head with two `stat`s, see `#currentHead`, and then reads nothing). `migrate` (writers, under the lock) turns a format-1 session into a snapshot.
   */
  async #readHead(id: string, migrate: boolean): Promise<Head> {
    const sp = this.#sp(id);
    if (migrate) {
      const cached = this.#currentHead(id, sp);
      if (cached) return cached;
    }
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      let names: string[];
      try {
        names = readdirSync(sp.dir);
      } catch (e) {
        if (isEnoent(e)) throw errors.notFound(id);
        throw e;
      }
      const scan = scanSessionDir(names);
      const snapRev = scan.snapshots[scan.snapshots.length - 1];
      if (snapRev === undefined) {
        if (!scan.legacy) throw missingSnapshot(id, scan.logs);
        const legacy = await this.#readLegacy(id);
        if (!legacy) continue;
        if (!migrate) {
          return {
            header: legacy.header,
            lineage: legacy.lineage,
            messageCount: legacy.messages.length,
            snapRev: 0,
            tabled: false,
            snapIno: 0,
            snapBytes: 0,
            logIno: 0,
            logSize: 0,
            logFileSize: 0,
            logRecords: 0,
            verified: false,
          };
        }
        await this.#writeSnapshot(id, legacy.header, legacy.lineage, legacy.messages);
        continue;
      }
      // The snapshot's identity, then the log's: when both match what this store last saw,
      // the cached head is current and nothing else is read.
      let snapIno: number;
      try {
        snapIno = Number(statSync(sp.snapshot(snapRev)).ino);
      } catch (e) {
        if (isEnoent(e)) continue;
        throw e;
      }
      const cached = this.#heads.get(id);
      const fresh = cached && cached.snapRev === snapRev && cached.snapIno === snapIno;
      let handle: Fd | undefined;
      try {
        handle = openFd(sp.log(snapRev), 'r');
      } catch (e) {
        if (!isEnoent(e)) throw e;
      }
      if (!handle) {
        // No shortcut from the cached head here: only the snapshot's inode would vouch for
        // it, and a session deleted and re-created by another process may get that inode
        // number again. Its meta is small.
        let snapMeta: SnapshotInfo;
        try {
          snapMeta = await this.#readSnapshotMeta(id, sp.snapshot(snapRev));
        } catch (e) {
          if (isEnoent(e)) continue;
          throw e;
        }
        const head: Head = {
          header: snapMeta.meta.header,
          lineage: readLineage(snapMeta.meta.lineage),
          messageCount: snapMeta.meta.messageCount,
          snapRev,
          tabled: snapMeta.tabled,
          snapIno,
          snapBytes: snapMeta.bytes,
          logIno: 0,
          logSize: 0,
          logFileSize: 0,
          logRecords: 0,
          verified: true,
        };
        this.#heads.set(id, head);
        return head;
      }
      try {
        const st = await handle.stat();
        const ino = Number(st.ino);
        if (
          fresh &&
          cached.logIno === ino &&
          cached.logFileSize === st.size &&
          (cached.verified || !migrate) &&
          this.#pinned(sp.log(snapRev), ino)
        )
          return cached;
        let snapMeta: SnapshotInfo;
        try {
          snapMeta = await this.#readSnapshotMeta(id, sp.snapshot(snapRev));
        } catch (e) {
          if (isEnoent(e)) continue;
          throw e;
        }
        const base: Head = {
          header: snapMeta.meta.header,
          lineage: readLineage(snapMeta.meta.lineage),
          messageCount: snapMeta.meta.messageCount,
          snapRev,
          tabled: snapMeta.tabled,
          snapIno,
          snapBytes: snapMeta.bytes,
          logIno: ino,
          logSize: 0,
          logFileSize: st.size,
          logRecords: 0,
          verified: migrate,
        };
        const head = (await this.#lastRecord(id, handle, st.size, base, migrate)) ?? base;
        this.#heads.set(id, head);
        return head;
      } finally {
        await handle.close();
      }
    }
    throw errors.unavailable(`session "${id}" kept changing while being read`);
  }

  /**
   * The cached head of a writer (the caller holds the session lock) when two `stat`s prove
   * it current, else `undefined` (the caller then lists the folder). Current means: the
   * cached log is still at its path with the same inode and exactly the size this store
   * left it (any append, truncation or replacement by another process changes one of
   * them; appends only grow it, and a log is never rewritten in place), and the cached
   * snapshot is still at its path, same inode, and not marked superseded. A newer snapshot
   * is only ever written by `#writeSnapshot`, which first clears the owner-write bit of
   * every older snapshot (see there) and then removes older snapshots and logs: so if a
   * newer snapshot exists — even one whose writer crashed before that removal — the
   * cached snapshot is either gone or marked, and the full scan runs. Only used while a
   * log exists: a snapshot alone is checked by the full scan.
   */
  #currentHead(id: string, sp: SessionPaths): Head | undefined {
    const cached = this.#heads.get(id);
    if (!cached?.verified || cached.logIno === 0 || cached.logFileSize !== cached.logSize)
      return undefined;
    if (process.platform === 'win32') return undefined;
    // Only while this store keeps the log open: an open file's inode number cannot be
    // given to a new file, so the same inode at the path is the very file this store wrote
    // (not a log of the session deleted and re-created meanwhile by another process).
    if (!this.#pinned(sp.log(cached.snapRev), cached.logIno)) return undefined;
    const log = statSync(sp.log(cached.snapRev), { throwIfNoEntry: false });
    if (!log || Number(log.ino) !== cached.logIno || log.size !== cached.logSize) return undefined;
    const snap = statSync(sp.snapshot(cached.snapRev), { throwIfNoEntry: false });
    // Exactly the mode snapshots are written with: a marked one lacks owner-write, and a
    // file system that does not keep modes (all files alike) never takes this path.
    if (!snap || Number(snap.ino) !== cached.snapIno || (snap.mode & 0o777) !== 0o600)
      return undefined;
    return cached;
  }

  /** The last good log record as a head, found from the file's end (or by a forward scan). */
  async #lastRecord(
    id: string,
    handle: Fd,
    size: number,
    base: Head,
    verifyBody: boolean,
  ): Promise<Head | undefined> {
    if (size === 0) return undefined;
    const toHead = (meta: LogMeta, end: number): Head => {
      const problem = headerProblem(meta.header, id);
      if (problem) throw errors.corrupt(id, `log record ${meta.seq}: ${problem}`);
      return {
        ...base,
        header: meta.header,
        lineage: readLineage(meta.lineage),
        messageCount: meta.messageCount,
        logSize: end,
        logRecords: meta.seq,
      };
    };
    if (size >= HEAD_BYTES + TAIL_BYTES) {
      const tail = Buffer.alloc(TAIL_BYTES);
      await handle.read(tail, 0, TAIL_BYTES, size - TAIL_BYTES);
      const total = tail.readUInt32LE(0);
      if (
        !verifyBody &&
        tail.readUInt32LE(4) === TAIL_MAGIC &&
        total <= size &&
        total >= HEAD_BYTES + TAIL_BYTES
      ) {
        // Readers only need the header: the record's head and meta, not its body.
        const headBuf = Buffer.alloc(HEAD_BYTES);
        await handle.read(headBuf, 0, HEAD_BYTES, size - total);
        const head = decodeHead(headBuf);
        if (head && head.total === total) {
          const meta = await readMeta<LogMeta>(handle, head, size - total);
          if (meta) return toHead(meta, size);
        }
      }
      if (
        tail.readUInt32LE(4) === TAIL_MAGIC &&
        total <= size &&
        total >= HEAD_BYTES + TAIL_BYTES
      ) {
        // Read the whole last record: its body checksum tells a complete append from one a
        // power loss left half-written.
        const buf = Buffer.alloc(total);
        await handle.read(buf, 0, total, size - total);
        this.stats.transcriptReads++;
        const parsed = parseFrames<LogMeta>(buf);
        const frame = parsed.frames[0];
        if (frame && parsed.frames.length === 1 && !parsed.torn && !parsed.corrupt) {
          return toHead(frame.meta, size);
        }
      }
    }
    // The tail is torn: scan forward over heads and metas to the last good record.
    const buf = Buffer.alloc(size);
    await handle.read(buf, 0, size, 0);
    this.stats.transcriptReads++;
    const parsed = parseFrames<LogMeta>(buf);
    if (parsed.corrupt) throw errors.corrupt(id, `log-${base.snapRev}.skr: ${parsed.corrupt}`);
    const last = parsed.frames[parsed.frames.length - 1];
    if (!last) return { ...base, logSize: 0 };
    return toHead(last.meta, parsed.validEnd);
  }

  /**
   * A snapshot's meta (its first frame's), its file size and whether an offset table
   * (format 3: a second frame) follows. Reads the head and meta only.
   */
  async #readSnapshotMeta(id: string, path: string): Promise<SnapshotInfo> {
    const handle = openFd(path, 'r');
    try {
      const st = await handle.stat();
      const headBuf = Buffer.alloc(HEAD_BYTES);
      const { bytesRead } = await handle.read(headBuf, 0, HEAD_BYTES, 0);
      const head = bytesRead === HEAD_BYTES ? decodeHead(headBuf) : undefined;
      // Format 3 appends the offset table as a second frame (checked by full loads).
      if (
        !head ||
        head.total > st.size ||
        (head.total < st.size && st.size - head.total < HEAD_BYTES + TAIL_BYTES)
      ) {
        throw errors.corrupt(id, `snapshot ${path} is truncated or damaged`);
      }
      const meta = await readMeta<SnapshotMeta>(handle, head, 0);
      if (meta?.kind !== 'snapshot') {
        throw errors.corrupt(id, `snapshot ${path} has a damaged header`);
      }
      const problem = headerProblem(meta.header, id);
      if (problem) throw errors.corrupt(id, `snapshot ${path}: ${problem}`);
      return { meta, bytes: st.size, tabled: head.total < st.size };
    } finally {
      await handle.close();
    }
  }

  async #readLegacy(id: string): Promise<Loaded | undefined> {
    let text: string;
    try {
      text = await fsp.readFile(this.#sp(id).legacy, 'utf8');
    } catch (e) {
      if (isEnoent(e)) return undefined;
      throw e;
    }
    this.stats.transcriptReads++;
    try {
      return { ...migrateLegacy(JSON.parse(text), id), lineage: readLineage(undefined) };
    } catch (cause) {
      throw errors.corrupt(
        id,
        `session.json (format 1): ${cause instanceof Error ? cause.message : String(cause)}`,
        cause,
      );
    }
  }

  /**
   * The whole session: newest snapshot plus its log, every checksum verified. Retries
   * when a concurrent writer replaces the snapshot under it. Never takes a lock.
   */
  async #readFull(id: string): Promise<Loaded> {
    const sp = this.#sp(id);
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      let names: string[];
      try {
        names = readdirSync(sp.dir);
      } catch (e) {
        if (isEnoent(e)) throw errors.notFound(id);
        throw e;
      }
      const scan = scanSessionDir(names);
      const snapRev = scan.snapshots[scan.snapshots.length - 1];
      if (snapRev === undefined) {
        if (!scan.legacy) throw missingSnapshot(id, scan.logs);
        const legacy = await this.#readLegacy(id);
        if (legacy) return legacy;
        continue;
      }
      let snapBuf: Buffer;
      try {
        snapBuf = await fsp.readFile(sp.snapshot(snapRev));
      } catch (e) {
        if (isEnoent(e)) continue;
        throw e;
      }
      let logBuf: Buffer | undefined;
      try {
        logBuf = await fsp.readFile(sp.log(snapRev));
      } catch (e) {
        if (!isEnoent(e)) throw e;
        if (!(await exists(sp.snapshot(snapRev)))) continue;
      }
      this.stats.transcriptReads++;
      this.stats.transcriptBytesRead += snapBuf.length + (logBuf?.length ?? 0);
      return decodeSession(id, snapRev, snapBuf, logBuf);
    }
    throw errors.unavailable(`session "${id}" kept changing while being read`);
  }

  /**
   * Deletes a session with the full delete semantics; false when it does not exist. With
   * `expected` (a pruning candidate taken from the index), false too when the session, read
   * under its lock, is no longer that candidate: another revision or `updatedAt`, a parent
   * now, or unreadable.
   */
  async #remove(id: string, expected?: IndexEntryJson): Promise<boolean> {
    const sp = this.#sp(id);
    const removed = await this.#lock(id, async () => {
      let names: string[];
      try {
        names = readdirSync(sp.dir);
      } catch (e) {
        if (isEnoent(e)) return false;
        throw e;
      }
      const scan = scanSessionDir(names);
      if (scan.snapshots.length === 0 && !scan.legacy) return false;
      let deleted: MergeSide;
      try {
        const { header, lineage } = await this.#readHead(id, false);
        if (
          expected &&
          (header.revision !== expected.revision ||
            header.updatedAt !== expected.updatedAt ||
            header.parentId !== undefined)
        )
          return false;
        deleted = { header: headerFromJson(header), lineage };
      } catch (e) {
        if (!isSessionKitError(e, 'corrupt') || expected) {
          if (expected && (isSessionKitError(e, 'corrupt') || isSessionKitError(e, 'not_found')))
            return false;
          throw e;
        }
        // Unreadable: what the index knows of it (no lineage: children lose their base).
        const entry = (await this.#refreshIndex()).entries.get(id);
        const { messageCount: _n, ...header } = entry ?? {
          ...DELETED_UNKNOWN,
          id,
          messageCount: 0,
        };
        deleted = { header: headerFromJson(header), lineage: readLineage(undefined) };
      }
      // Promote the children first: a crash half-way leaves every session readable.
      const index = await this.#refreshIndex();
      const kids = [...index.entries.values()].filter((e) => e.parentId === id).map((e) => e.id);
      for (const childId of kids) await this.#reparent(childId, deleted);
      const grave = join(this.#paths.trash, `${id}.${randomBytes(6).toString('hex')}`);
      await fsp.rename(sp.dir, grave);
      if (this.#sync) await fsyncDir(this.#paths.sessions);
      const cachedHead = this.#heads.get(id);
      if (cachedHead) this.#dropFile(sp.log(cachedHead.snapRev));
      this.#dropFile(sp.search);
      this.#heads.delete(id);
      this.#eventTails.delete(id);
      this.#searchStale.delete(id);
      await this.#indexAppend([{ v: FORMAT_VERSION, op: 'del', id }], id);
      await fsp.rm(grave, { recursive: true, force: true });
      return true;
    });
    if (removed) {
      await this.#routerUpdate((state) => {
        state.bindings = state.bindings.filter((b) => b.sessionId !== id);
        state.follows = state.follows.filter((f) => f.target !== id);
      });
    }
    return removed;
  }

  /**
   * Promotes `childId` from the session `deleted` to that session's parent (core's
   * `promotedChild`: new `parentId`, re-based `branchedAtTurn` and lineage; revision and
   * `updatedAt` kept) with a header-only log record.
   */
  async #reparent(childId: string, deleted: MergeSide): Promise<void> {
    await this.#lock(childId, async () => {
      let head: Head;
      try {
        head = await this.#readHead(childId, true);
      } catch (e) {
        // Gone or unreadable: repair() reports it; the delete goes on.
        if (isSessionKitError(e, 'not_found') || isSessionKitError(e, 'corrupt')) return;
        throw e;
      }
      if (head.header.parentId !== deleted.header.id) return;
      const promoted = promotedChild(
        { header: headerFromJson(head.header), lineage: head.lineage },
        deleted,
      );
      const header = headerToJson(promoted.header);
      const after = { header, lineage: promoted.lineage, messageCount: head.messageCount };
      await this.#appendLog(childId, head, after, [], 'reparent');
      await this.#indexAppend(
        [{ v: FORMAT_VERSION, op: 'put', entry: entryOf(header, head.messageCount) }],
        childId,
      );
    });
  }

  /**
   * Rewrites the search file of a session whose last search append failed, from the full
   * transcript (best-effort: on failure it stays marked; `repair()` rewrites it too).
   * Caller holds the session lock.
   */
  async #rewriteSearch(id: string): Promise<void> {
    try {
      const full = await this.#readFull(id);
      await this.#writeSearch(id, full.messages);
      this.#searchStale.delete(id);
    } catch {
      // still marked
    }
  }

  async #writeSearch(id: string, messages: unknown[]): Promise<void> {
    // Derived data (rebuilt by repair), so no fsync: a crash may only make search stale.
    const path = this.#sp(id).search;
    this.#dropFile(path);
    replaceFileNoSync(path, tempPathFor(path), searchTextOf(messages));
    this.#searchStale.delete(id);
  }

  /**
   * Appends to the search file through a kept descriptor while the file at its path is
   * still that inode (it is replaced, never rewritten in place, by `#writeSearch`).
   */
  #appendSearch(id: string, messages: unknown[]): void {
    const text = searchTextOf(messages);
    if (!text) return;
    const path = this.#sp(id).search;
    const st = statSync(path, { throwIfNoEntry: false });
    let fd = st ? this.#takeFile(path, Number(st.ino)) : undefined;
    let ino = st ? Number(st.ino) : 0;
    if (fd === undefined) {
      fd = openSync(path, 'a', 0o600);
      ino = Number(fstatSync(fd).ino);
    }
    try {
      // Each message's text starts with core's separator: appending keeps the file equal
      // to `searchTextOf` of the whole history.
      writeAll(fd, Buffer.from(text, 'utf8'));
    } catch (e) {
      closeQuietly(fd);
      throw e;
    }
    this.#keepFile(path, fd, ino);
  }

  async #lastEventSequence(
    id: string,
    path: string,
    ino: number,
    size: number,
  ): Promise<{ sequence: number; validEnd: number }> {
    const cached = this.#eventTails.get(id);
    if (cached && cached.ino === ino && cached.size === size) {
      return { sequence: cached.sequence, validEnd: size };
    }
    if (size === 0) return { sequence: 0, validEnd: 0 };
    const buf = await fsp.readFile(path);
    const parsed = parseFrames<EventMeta>(buf);
    if (parsed.corrupt) throw errors.corrupt(id, `events.skr: ${parsed.corrupt}`);
    const last = parsed.frames[parsed.frames.length - 1];
    return { sequence: last?.meta.sequence ?? 0, validEnd: parsed.validEnd };
  }

  // ------------------------------------------------------------------ internals: index

  /** Brings the in-memory index up to date by reading only what was appended since. */
  async #refreshIndex(rebuilt = false): Promise<IndexState> {
    const lockNames = readdirSync(this.#paths.locks);
    if (!rebuilt && lockNames.includes('.index.lock') && this.#indexLockAbandoned()) {
      // A process died while rewriting the index: records appended to the old file after
      // it was read may not have been carried over. Rebuild (this breaks the dead lock).
      await this.#rebuild();
      return this.#refreshIndex(true);
    }
    const outcome = this.#readIndexTail();
    if (outcome !== 'missing' && outcome !== 'damaged') {
      // A session whose lock file exists is being written, or its writer was killed
      // after its data was durable but before its index entry was: read its head.
      const pending = new Set<string>();
      for (const name of lockNames) {
        const m = /^(.+)\.lock$/.exec(name);
        if (m && isValidId(m[1])) pending.add(m[1]!);
      }
      if (pending.size > 0) return this.#withIntentsResolved(outcome, pending);
      return outcome;
    }
    if (rebuilt) {
      throw errors.make(
        'corrupt',
        `the index ${this.#paths.index} is ${outcome} right after a rebuild — run repair()`,
      );
    }
    // The index is a cache. `#init` creates it, so a missing one was deleted; a damaged
    // record (a disk error, or an append cut short by a kill with appends after it) is
    // not worth keeping either: rebuild it from the sessions.
    await this.#rebuild();
    return this.#refreshIndex(true);
  }

  /**
   * True when `locks/.index.lock` names a process of this host (and pid namespace) that is
   * no longer alive: its holder died while compacting or rebuilding the index. An empty or
   * unreadable lock file, or one of another host, is not judged here (a holder killed
   * before writing its lock file had not started rewriting).
   */
  #indexLockAbandoned(): boolean {
    let info: { pid?: unknown; hostname?: unknown; pidNamespace?: unknown };
    try {
      info = JSON.parse(readFileSync(this.#paths.indexLock, 'utf8')) as typeof info;
    } catch {
      return false;
    }
    if (typeof info.pid !== 'number' || info.hostname !== hostname()) return false;
    if (info.pidNamespace !== undefined && info.pidNamespace !== pidNamespace()) return false;
    try {
      process.kill(info.pid, 0);
      return false;
    } catch (e) {
      return (e as { code?: unknown }).code === 'ESRCH';
    }
  }

  /**
   * Applies what was appended to `index.log` since the last call to the cached state, in
   * one synchronous step (so concurrent calls never apply a tail twice). Re-reads the
   * whole file when it was replaced (compaction, repair).
   */
  #readIndexTail(): IndexState | 'missing' | 'damaged' {
    let fd: number;
    try {
      fd = openSync(this.#paths.index, 'r');
    } catch (e) {
      if (isEnoent(e)) return 'missing';
      throw e;
    }
    try {
      const st = fstatSync(fd);
      const ino = Number(st.ino);
      let state = this.#index;
      let same = state.ino === ino && st.size >= state.size;
      if (same && state.size > 0) {
        const first = Buffer.alloc(HEAD_BYTES);
        const n = readSync(fd, first, 0, HEAD_BYTES, 0);
        same = state.first !== undefined && n === HEAD_BYTES && first.equals(state.first);
      }
      if (!same) {
        state = emptyIndex();
        state.ino = ino;
      }
      if (st.size > state.size) {
        const buf = Buffer.alloc(st.size - state.size);
        let done = 0;
        while (done < buf.length) {
          const n = readSync(fd, buf, done, buf.length - done, state.size + done);
          if (n === 0) break;
          done += n;
        }
        const parsed = parseFrames<IndexMeta>(buf.subarray(0, done));
        if (parsed.corrupt) return 'damaged';
        if (state.size === 0 && parsed.validEnd >= HEAD_BYTES) {
          state.first = Buffer.from(buf.subarray(0, HEAD_BYTES));
        }
        for (const f of parsed.frames) applyIndexRecord(state, f.meta);
        state.size += parsed.validEnd;
        if (parsed.frames.length > 0) state.children = undefined;
      }
      this.#index = state;
      return state;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * A view of the index where sessions with a possibly unfinished write (their lock file
   * exists: a write in flight, or a writer killed after its data was durable but before
   * its index entry was) are read
   * from their heads. Reads snapshot metas and last-record metas, never message bodies.
   */
  async #withIntentsResolved(state: IndexState, pending: Set<string>): Promise<IndexState> {
    const view: IndexState = {
      ...state,
      entries: new Map(state.entries),
      listable: new Map(state.listable),
      children: undefined,
    };
    for (const id of pending) {
      try {
        const head = await this.#readHead(id, false);
        const entry = entryOf(head.header, head.messageCount);
        view.entries.set(id, entry);
        view.listable.set(id, listableOf(entry));
      } catch (e) {
        if (!isSessionKitError(e, 'not_found') && !isSessionKitError(e, 'corrupt')) throw e;
        view.entries.delete(id);
        view.listable.delete(id);
      }
    }
    return view;
  }

  /**
   * The children of `id` per the index. Unlike `list`, it does not re-read the heads of
   * sessions being written (a reparent in flight shows once its write completes).
   */
  async #childrenOf(id: string): Promise<string[]> {
    const tail = this.#readIndexTail();
    const index = typeof tail === 'string' ? await this.#refreshIndex() : tail;
    return [...(this.#childrenMap(index).get(id) ?? [])];
  }

  #childrenMap(index: IndexState): Map<string, string[]> {
    if (index.children) return index.children;
    const map = new Map<string, string[]>();
    for (const e of index.entries.values()) {
      if (e.parentId === undefined) continue;
      const list = map.get(e.parentId);
      if (list) list.push(e.id);
      else map.set(e.parentId, [e.id]);
    }
    for (const list of map.values()) list.sort(compareIds);
    index.children = map;
    return map;
  }

  /**
   * Appends records to `index.log` without a store-wide lock: one `O_APPEND` write, which
   * the kernel never interleaves with another. The caller holds the session's lock, so a
   * session's records land in write order. If the file was replaced meanwhile (compaction
   * or repair renamed a new one over it), the record went to the old file: append again.
   */
  async #indexAppend(records: IndexMeta[] | Buffer, id: string): Promise<void> {
    const bytes = Buffer.isBuffer(records)
      ? records
      : Buffer.concat(records.map((r) => encodeFrame(r)));
    const path = this.#paths.index;
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      // A descriptor kept from the last append, or a new one. No O_CREAT: a deleted index
      // is rebuilt from the sessions by the next reader, which then includes this write,
      // so there is nothing to append to.
      const kept = this.#files.get(path);
      let fd = kept ? this.#takeFile(path, kept.ino) : undefined;
      let ino = kept?.ino ?? 0;
      if (fd === undefined) {
        try {
          fd = openSync(path, constants.O_WRONLY | constants.O_APPEND);
        } catch (e) {
          if (isEnoent(e)) {
            this.#indexed.add(id);
            return;
          }
          throw e;
        }
        ino = Number(fstatSync(fd).ino);
      }
      let current: Stats | undefined;
      try {
        writeAll(fd, bytes);
        current = statSync(path, { throwIfNoEntry: false });
      } catch (e) {
        closeQuietly(fd);
        throw e;
      }
      // Still the file at the path after the write: the record is in the live index (a
      // compaction that replaces it later carries late records over).
      if (current && Number(current.ino) === ino) {
        this.#indexed.add(id);
        this.#keepFile(path, fd, ino);
        if (current.size > this.#indexCompactedSize * 2 + this.#indexSlack) this.#compactDue = true;
        return;
      }
      closeQuietly(fd);
      if (!current) {
        this.#indexed.add(id);
        return;
      }
    }
    throw errors.unavailable(`the index ${this.#paths.index} kept being replaced`);
  }

  /** Rewrites `index.log` with one entry per live session. */
  async #compactIndex(): Promise<void> {
    // timeoutMs 0: a busy index lock means another store is rewriting it right now.
    await this.#replaceIndex((buf) => {
      const parsed = parseFrames<IndexMeta>(buf);
      if (parsed.corrupt) return undefined; // the next reader rebuilds it from the sessions
      const state = emptyIndex();
      for (const f of parsed.frames) applyIndexRecord(state, f.meta);
      return serializeIndex(state.entries);
    }, 0);
  }

  /**
   * Replaces `index.log` with `build(current content)` under the index lock (no-op when
   * `build` returns undefined). Appenders do not take that lock, so records they append to
   * the old file after it was read are carried over: each under its session's lock, and
   * only when the new file holds no later record of that session (its writer may already
   * have appended again itself).
   */
  async #replaceIndex(
    build: (buf: Buffer, ino: number) => Buffer | undefined,
    timeoutMs = this.#lockOptions.timeoutMs,
  ): Promise<void> {
    await withFileLock(this.#paths.indexLock, () => this.#replaceIndexLocked(build), {
      ...this.#lockOptions,
      timeoutMs,
    });
  }

  /** `#replaceIndex`'s work; the caller holds the index lock. */
  async #replaceIndexLocked(
    build: (buf: Buffer, ino: number) => Buffer | undefined,
  ): Promise<void> {
    let old: Fd | undefined;
    let buf = Buffer.alloc(0);
    let ino = 0;
    try {
      old = openFd(this.#paths.index, 'r');
    } catch (e) {
      if (!isEnoent(e)) throw e;
    }
    const wasReplacing = this.#replacing;
    this.#replacing = true;
    try {
      if (old) {
        const st = await old.stat();
        ino = Number(st.ino);
        buf = Buffer.alloc(st.size);
        await old.read(buf, 0, st.size, 0);
      }
      const content = build(buf, ino);
      if (!content) return;
      await this.#writeAtomic(this.#paths.index, content);
      this.#dropFile(this.#paths.index);
      this.#indexCompactedSize = content.length;
      if (!old) return;
      const size = (await old.stat()).size;
      if (size <= buf.length) return;
      const late = Buffer.alloc(size - buf.length);
      await old.read(late, 0, late.length, buf.length);
      for (const f of parseFrames<IndexMeta>(late).frames) {
        const id = f.meta.op === 'put' ? f.meta.entry.id : f.meta.id;
        const carry = async () => {
          const now = readFileSync(this.#paths.index);
          const newer = parseFrames<IndexMeta>(now, content.length).frames.some(
            (g) => (g.meta.op === 'put' ? g.meta.entry.id : g.meta.id) === id,
          );
          if (!newer) {
            const out = openFd(this.#paths.index, constants.O_WRONLY | constants.O_APPEND);
            try {
              await out.write(late.subarray(f.start, f.end));
            } finally {
              await out.close();
            }
          }
        };
        if (this.#held.has(id)) await carry();
        else await this.#lock(id, carry);
      }
    } finally {
      this.#replacing = wasReplacing;
      await old?.close();
    }
  }

  async #searchPage(
    index: IndexState,
    opts: NormalizedListOptions,
  ): Promise<(ListableEntry & { entry: IndexEntryJson })[]> {
    const { query, ...rest } = opts;
    const candidates: (ListableEntry & { entry: IndexEntryJson })[] = [];
    for (const l of index.listable.values()) {
      if (!matchesListFilters(l, rest)) continue;
      if (opts.startAfter && !isAfterCursor(l, opts.startAfter, opts.oldestFirst)) continue;
      candidates.push(l);
    }
    candidates.sort((a, b) => compareListOrder(a, b, opts.oldestFirst));
    const want = opts.offset + opts.limit;
    const hits: (ListableEntry & { entry: IndexEntryJson })[] = [];
    for (const l of candidates) {
      if (hits.length >= want) break;
      if (query === undefined || l.title.toLowerCase().includes(query)) {
        hits.push(l);
        continue;
      }
      let text = '';
      try {
        text = await fsp.readFile(this.#sp(l.id).search, 'utf8');
      } catch (e) {
        if (!isEnoent(e)) throw e;
      }
      if (searchTextMatches(text, query)) hits.push(l);
    }
    return hits.slice(opts.offset, want);
  }

  /**
   * The repair pass: every session folder read in full, the index rewritten. Holds the
   * index lock for the whole pass, so no compaction replaces the index during the scan and
   * every record appended meanwhile is found after the position noted at the start.
   */
  async #rebuild(): Promise<RepairReport> {
    return withFileLock(
      this.#paths.indexLock,
      async () => {
        const was = this.#replacing;
        this.#replacing = true; // no compaction from this store while it holds the lock
        try {
          return await this.#rebuildLocked();
        } finally {
          this.#replacing = was;
        }
      },
      this.#lockOptions,
    );
  }

  async #rebuildLocked(): Promise<RepairReport> {
    const startStat = await statOrUndefined(this.#paths.index);
    const fresh = new Map<string, IndexEntryJson>();
    const skippedCorrupt: RepairReport['skippedCorrupt'] = [];
    let names: string[] = [];
    try {
      names = await fsp.readdir(this.#paths.sessions);
    } catch (e) {
      if (!isEnoent(e)) throw e;
    }
    names.sort();
    for (const id of names) {
      if (!isValidId(id)) continue;
      try {
        const { header, messages } = await this.#readFull(id);
        fresh.set(id, entryOf(header, messages.length));
        const text = searchTextOf(messages);
        let current: string | undefined;
        try {
          current = await fsp.readFile(this.#sp(id).search, 'utf8');
        } catch (e) {
          if (!isEnoent(e)) throw e;
        }
        // Also rewrites files of format 2 (messages separated by "\n", so a query could
        // span two of them).
        if (current === undefined || current !== text) {
          // Under the session's lock (a concurrent commit's search append is not lost),
          // from the transcript as it is then.
          const rewrite = async () => this.#writeSearch(id, (await this.#readFull(id)).messages);
          if (this.#held.has(id)) await rewrite();
          else {
            try {
              await this.#lock(id, rewrite);
            } catch (e) {
              // Busy for longer than the lock timeout (e.g. its holder waits for the index
              // lock held here): the search text is derived data, the next repair fixes it.
              if (!isSessionKitError(e, 'unavailable')) throw e;
            }
          }
        }
      } catch (e) {
        if (isSessionKitError(e, 'not_found')) continue;
        if (isSessionKitError(e, 'corrupt')) {
          skippedCorrupt.push({ id, reason: e.message.replace(`${errors.prefix} `, '') });
          continue;
        }
        throw e;
      }
    }
    let fixed = 0;
    await this.#replaceIndexLocked((buf, ino) => {
      const parsed = parseFrames<IndexMeta>(buf);
      const old = emptyIndex();
      for (const f of parsed.frames) applyIndexRecord(old, f.meta);
      // Records other writers appended while we scanned describe newer states: keep them.
      const from =
        startStat && Number(startStat.ino) === ino
          ? Math.min(startStat.size, buf.length)
          : buf.length;
      const later = parsed.frames.filter((f: Frame<IndexMeta>) => f.start >= from);
      const final = new Map(fresh);
      for (const f of later) {
        const r = f.meta;
        if (r.op === 'put') final.set(r.entry.id, r.entry);
        else if (r.op === 'del') final.delete(r.id);
      }
      fixed = 0;
      for (const [id, entry] of final) {
        if (!isDeepStrictEqual(old.entries.get(id), entry)) fixed++;
      }
      for (const id of old.entries.keys()) if (!final.has(id)) fixed++;
      if (parsed.corrupt) fixed++;
      return serializeIndex(final);
    });
    this.#index = emptyIndex();
    // Half-deleted sessions of a killed delete.
    try {
      for (const name of await fsp.readdir(this.#paths.trash)) {
        await fsp.rm(join(this.#paths.trash, name), { recursive: true, force: true });
      }
    } catch (e) {
      if (!isEnoent(e)) throw e;
    }
    return { rebuilt: fresh.size, skippedCorrupt, indexEntriesFixed: fixed };
  }

  // ------------------------------------------------------------------ internals: router

  async #routerRead(): Promise<RouterState> {
    let text: string;
    try {
      text = await fsp.readFile(this.#paths.router, 'utf8');
    } catch (e) {
      if (isEnoent(e)) return { v: FORMAT_VERSION, bindings: [], follows: [], last: 0 };
      throw e;
    }
    try {
      const state = JSON.parse(text) as RouterState;
      if (!Array.isArray(state.bindings) || !Array.isArray(state.follows)) throw new Error('shape');
      return state;
    } catch (cause) {
      throw errors.make('corrupt', `router file ${this.#paths.router} is damaged`, { cause });
    }
  }

  async #routerUpdate(fn: (state: RouterState) => void): Promise<void> {
    await withFileLock(
      this.#paths.routerLock,
      async () => {
        const state = await this.#routerRead();
        const before = JSON.stringify(state);
        fn(state);
        const after = JSON.stringify(state);
        if (after !== before) await this.#writeAtomic(this.#paths.router, after);
      },
      this.#lockOptions,
    );
  }
}

// ---------------------------------------------------------------------- helpers

/** The header fields of a deleted session that neither the session nor the index had. */
const DELETED_UNKNOWN: Omit<HeaderJson, 'id'> = {
  title: '',
  folder: '',
  createdAt: 0,
  updatedAt: 0,
  model: '',
  provider: '',
  tokenCount: 0,
  costUsd: 0,
  turnCount: 0,
  metadata: {},
  status: 'active',
  revision: 1,
};

/** `not_found` for a folder without data; `corrupt` when a log survives its snapshot. */
function missingSnapshot(id: string, logs: number[]) {
  if (logs.length === 0) return errors.notFound(id);
  return errors.corrupt(
    id,
    `its snapshot is missing (log-${logs[logs.length - 1]}.skr has no snap file)`,
  );
}

/** `value` as JSON would store it (no `undefined` members), for comparisons. */
function jsonCopy(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

function entryOf(header: HeaderJson, messageCount: number): IndexEntryJson {
  return { ...header, messageCount };
}

function routerNow(state: RouterState): number {
  const at = nextUpdatedAt(state.last ? new Date(state.last) : undefined).getTime();
  state.last = at;
  return at;
}

/** The meta of the frame whose head is `head` at `offset`, or `undefined` when damaged. */
async function readMeta<T>(handle: Fd, head: FrameHead, offset: number): Promise<T | undefined> {
  const buf = Buffer.alloc(head.metaLen);
  await handle.read(buf, 0, head.metaLen, offset + HEAD_BYTES);
  if (crc32(buf) !== head.metaCrc) return undefined;
  try {
    return JSON.parse(buf.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await fsp.access(path, constants.F_OK);
    return true;
  } catch (e) {
    if (isEnoent(e)) return false;
    throw e;
  }
}

async function statOrUndefined(path: string) {
  try {
    return await fsp.stat(path);
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
}

/** Decodes a snapshot and its log into the session they describe; `corrupt` on damage. */
function decodeSession(
  id: string,
  snapRev: number,
  snapBuf: Buffer,
  logBuf: Buffer | undefined,
): Loaded {
  // The frames' metas only: the body checksums are checked here, the JSON parsed once.
  const snap = parseFrames<SnapshotMeta>(snapBuf);
  const frame = snap.frames[0];
  // Format 3: a second frame, the offset table (its checksum checked by parseFrames).
  const table = snap.frames[1] as Frame<unknown> | undefined;
  const tableOk =
    table === undefined ||
    (snap.frames.length === 2 && (table.meta as { kind?: unknown }).kind === 'offsets');
  if (!frame || !tableOk || snap.torn || snap.corrupt) {
    throw errors.corrupt(
      id,
      `snapshot snap-${snapRev}.skr is ${snap.torn || !frame ? 'truncated' : 'damaged'}${snap.corrupt ? ` (${snap.corrupt})` : ''}`,
    );
  }
  const meta = frame.meta;
  if (meta.kind !== 'snapshot') throw errors.corrupt(id, `snap-${snapRev}.skr is not a snapshot`);
  let problem = headerProblem(meta.header, id);
  if (problem) throw errors.corrupt(id, `snap-${snapRev}.skr: ${problem}`);
  let messages: unknown[];
  try {
    messages = frameBody(snapBuf, frame) as unknown[];
  } catch (cause) {
    throw errors.corrupt(id, `snap-${snapRev}.skr: messages are not valid JSON`, cause);
  }
  if (!Array.isArray(messages) || messages.length !== meta.messageCount) {
    throw errors.corrupt(id, `snap-${snapRev}.skr: message count does not match`);
  }
  let header = meta.header;
  let lineage = meta.lineage;
  if (logBuf && logBuf.length > 0) {
    const log = parseFrames<LogMeta>(logBuf);
    if (log.corrupt) throw errors.corrupt(id, `log-${snapRev}.skr: ${log.corrupt}`);
    let seq = 0;
    for (const f of log.frames) {
      const m = f.meta;
      seq++;
      if (m.seq !== seq)
        throw errors.corrupt(id, `log-${snapRev}.skr: record ${seq} is out of order`);
      problem = headerProblem(m.header, id);
      if (problem) throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: ${problem}`);
      if (m.header.revision < header.revision) {
        throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: revision went backwards`);
      }
      if (m.appended > 0) {
        let added: unknown;
        try {
          added = frameBody(logBuf, f);
        } catch (cause) {
          throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: bad JSON`, cause);
        }
        if (!Array.isArray(added) || added.length !== m.appended) {
          throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: wrong message count`);
        }
        for (const msg of added) messages.push(msg);
      }
      if (messages.length !== m.messageCount) {
        throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: message count does not add up`);
      }
      header = m.header;
      lineage = m.lineage;
    }
  }
  return { header, lineage: readLineage(lineage), messages };
}
