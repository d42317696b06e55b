// The state one `FileStore` shares among its parts: where the store is, its options, its
// counters and its caches. Every part of the store is a plain function taking this.

import { tempPathFor, writeFileAtomic } from '@sessionkit/core/adapter';
import { type SessionPaths, type StorePaths, sessionPaths, storePaths } from '../format/paths.js';
import { emptyIndex, type IndexState } from '../index-log/state.js';
import { CommitJournal } from '../io/commit-journal.js';
import { KeptFiles } from '../io/kept-files.js';
import { LockJudge } from '../io/lock-file.js';
import { LogSyncer } from '../io/log-syncer.js';
import { replaceFileNoSync } from '../io/sync-fd.js';
import type { ResolvedOptions } from '../options.js';
import type { PendingSearchMerge } from '../search/search-merge.js';
import { LeaseTable } from '../session/lease.js';
import type { KnownOperations, SessionTip } from '../session/session-tip.js';

/** Session path sets kept at most (pure strings, never stale: the cache only saves work). */
const SESSION_PATHS_KEPT = 16_384;

/** What `FileStore.stats` counts (for tests and monitoring). */
export interface TranscriptStats {
  transcriptReads: number;
  transcriptBytesRead: number;
  /** `sync: 'group'`: journal flushes (one fdatasync each) and the commits they acknowledged. */
  groupFlushes: number;
  groupCommits: number;
  /** `sync: true`: log fdatasyncs made on the event loop (`LogSyncer`). */
  inlineSyncs: number;
}

export class StoreContext {
  readonly dir: string;
  readonly paths: StorePaths;
  readonly options: ResolvedOptions;
  /** What every `withFileLock` of this store is given. */
  readonly lockOptions: { timeoutMs: number; staleMs: number };
  readonly stats: TranscriptStats = {
    transcriptReads: 0,
    transcriptBytesRead: 0,
    groupFlushes: 0,
    groupCommits: 0,
    inlineSyncs: 0,
  };
  /** Set by `close()`: descriptors are no longer kept, calls fail with `closed`. */
  closed = false;
  /**
   * Each session's tip as this store last read or wrote it. Readers use it when the log's
   * identity and size match; a writer only through `cachedWriterTip`'s checks.
   */
  readonly tips = new Map<string, SessionTip>();
  /**
   * Each session's operation log as this store last knew it (`session/operations.ts`);
   * only a writer holding the session's lock reads or changes it.
   */
  readonly operations = new Map<string, KnownOperations>();
  /** The end of each session's event log as this store last saw it, and its last sequence. */
  readonly eventTails = new Map<string, { ino: number; size: number; sequence: number }>();
  readonly keptFiles = new KeptFiles();
  /** Whose lock files listing finds (a live holder keeps its sessions' entries in step). */
  readonly lockJudge = new LockJudge();
  /** The session locks this store holds, kept across consecutive commits (leases). */
  readonly leases: LeaseTable;
  /** Unless `sync: false`: the journal whose flushes make commits durable. */
  readonly journal: CommitJournal | undefined;
  /** Where log appends are fdatasync'd (`sync: true`): inline or in the thread pool. */
  readonly logSyncer: LogSyncer;
  /** The index log as this store last read it (see `readIndexTail`). */
  index: IndexState = emptyIndex();
  /** The index's size right after this store last rewrote it (the compaction threshold). */
  indexCompactedSize = 0;
  /** An index append found the file past its compaction threshold. */
  indexCompactionDue = false;
  /** True while this store rewrites the index (it holds the index lock). */
  rewritingIndex = false;
  /** Session locks held by this store right now (the index rewrite must not re-take them). */
  readonly lockedSessions = new Set<string>();
  /** Sessions whose index record was appended under the lock held right now. */
  readonly indexedUnderLock = new Set<string>();
  /**
   * Sessions whose `search.txt` missed a turn because appending to it failed after the
   * commit was durable: the next commit of this store rewrites it whole (`repair()` too).
   */
  readonly searchStale = new Set<string>();
  /**
   * Search files (path and inode) known to be format 4, with the bytes of the stored
   * (uncompressed) chunks that end them: an append then neither checks the format nor
   * reads the file to decide on a merge.
   */
  readonly searchTails = new Map<string, number>();
  /**
   * Where this store's last append left each search file (inode, size) and under which
   * unbroken holding of the session's lock (`search/search-file.ts`, `knownSearchEnd`).
   */
  readonly searchEnds = new Map<string, { ino: number; size: number; epoch: number }>();
  /** Search merges being compressed, or waiting for their session's next commit. */
  readonly searchMerges = new Map<string, PendingSearchMerge>();
  readonly #sessionPaths = new Map<string, SessionPaths>();

  constructor(options: ResolvedOptions) {
    this.options = options;
    this.dir = options.dir;
    this.paths = storePaths(options.dir);
    this.lockOptions = { timeoutMs: options.lockTimeoutMs, staleMs: options.lockStaleMs };
    this.logSyncer = new LogSyncer(options.inlineSyncMs, this.stats);
    this.journal = options.sync
      ? new CommitJournal({
          dir: this.paths.journal,
          group: options.groupCommit,
          groupMs: options.groupCommitMs,
          syncer: this.logSyncer,
          stats: this.stats,
        })
      : undefined;
    this.leases = new LeaseTable({
      locksDir: this.paths.locks,
      wantsDir: this.paths.wants,
      lockPath: (id) => this.sessionPaths(id).lock,
      timeoutMs: options.lockTimeoutMs,
      staleMs: options.lockStaleMs,
      leaseMs: options.leaseMs,
    });
  }

  /**
   * Records the tip a write left (the caller holds the session lock): readers use it when
   * the log's identity and size match; the next write of this store under the same lease
   * trusts it after one `stat` of the log.
   */
  setWriterTip(id: string, tip: SessionTip): void {
    this.tips.set(id, { ...tip, leaseEpoch: this.leases.epochOf(id) });
  }

  /** Forgets the session's cached tip (the next write re-reads the folder). */
  forgetTip(id: string): void {
    this.tips.delete(id);
  }

  /** The paths of session `id` (cached). */
  sessionPaths(id: string): SessionPaths {
    let sp = this.#sessionPaths.get(id);
    if (!sp) {
      if (this.#sessionPaths.size >= SESSION_PATHS_KEPT) this.#sessionPaths.clear();
      sp = sessionPaths(this.paths, id);
      this.#sessionPaths.set(id, sp);
    }
    return sp;
  }

  /** Atomic replace of `path`: fsync'd (file and folder) unless the store is `sync: false`. */
  async writeAtomic(path: string, data: string | Uint8Array): Promise<void> {
    if (this.options.sync) await writeFileAtomic(path, data);
    else replaceFileNoSync(path, tempPathFor(path), data);
  }

  /** Returns a descriptor to the kept files (closed instead once the store is closed). */
  keepFile(path: string, fd: number, ino: number): void {
    this.keptFiles.keep(path, fd, ino, this.closed);
  }
}
