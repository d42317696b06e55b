// The options of `new FileStore(options)`: their meaning, defaults and validation.

import { resolve } from 'node:path';
import { assertKnownKeys } from '@sessionkit/core/adapter';
import { defaultFileStoreDir } from './default-dir.js';
import { errors } from './store/errors.js';

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
   * When a write is durable before it resolves (see the README's _Durability modes_):
   * - `true` (default): each write is fsync'd (`fdatasync` for appends) before it resolves;
   *   a machine crash loses no acknowledged write.
   * - `'group'`: group commit. A commit appends its record, then waits for the store's
   *   next flush, which fsyncs the store's journal once for every commit written since
   *   the last one; all the commits it covers resolve after it. A flush starts as soon as
   *   the previous one has ended (and, with `groupCommitMs`, not before that long after
   *   it started), so the commits that arrive while one runs (several sessions, or
   *   several writers of one session) share the next. A machine crash still loses no
   *   acknowledged write. Snapshots, creates and other writes are fsync'd as with `true`.
   * - `false`: nothing is fsync'd. A process crash loses nothing acknowledged, a machine
   *   crash (power loss, kernel panic) may lose the writes of the last seconds. For bulk
   *   loads and benchmarks.
   */
  sync?: boolean | 'group' | undefined;
  /**
   * With `sync: 'group'`: the shortest time between the starts of two flushes, in
   * milliseconds (0 to 1000). Default 0: a flush starts once the previous one has ended
   * and the commits of the current turn of the event loop are in; the fsync's own
   * duration is what gathers commits. A larger value gathers more commits per fsync on a
   * disk whose flushes are expensive per call, and adds up to that much to each commit.
   */
  groupCommitMs?: number | undefined;
  /**
   * With `sync: true`: a commit's fdatasync runs as a blocking call on the event loop,
   * instead of in libuv's thread pool, while that commit is the store's only one in
   * progress and the store's recent fdatasyncs took under this many milliseconds on
   * average (0 to 100; 0: always the thread pool). Inline, a lone writer's commit skips
   * the pool's round trip (here about a quarter of a turn); the event loop then waits for
   * the disk about that long, not on every commit of a disk whose fdatasyncs have grown
   * slower (one in about 15 to 38 then measures the disk again inline), and never
   * while other commits of the store could run meanwhile. Durability is the same either
   * way. Default 2.
   */
  inlineSyncMs?: number | undefined;
  /**
   * How long a session's lock file is kept after a commit for this store's next write of
   * that session, in milliseconds (a lease: no lock file is created and removed around
   * each commit). Another store or process that wants the lock gets it as soon as the
   * holder sees its want file (a watch of the folder; a poll every 100 ms, or 10 ms where
   * the folder cannot be watched), whatever this is; a lease of a process that died on
   * this host is broken at once. The lock file's mtime is set up to `2 × leaseMs` ahead,
   * so a lease of a process that died on *another* host (a shared network folder) blocks
   * its session for up to `2 × leaseMs + lockStaleMs` (use a smaller value on a folder
   * shared between hosts). It should exceed the time between two commits of a session, or
   * a writer that cycles through many sessions takes a fresh lock for each commit. 0
   * removes the lock after every write. Default 300 000 (5 minutes).
   */
  leaseMs?: number | undefined;
}

/** Every key of `FileStoreOptions` (internal: the URL adapter accepts all but `dir`). */
export const OPTION_KEYS = [
  'dir',
  'snapshotEvery',
  'lockTimeoutMs',
  'lockStaleMs',
  'indexSlackBytes',
  'sync',
  'groupCommitMs',
  'inlineSyncMs',
  'leaseMs',
] as const;
const DEFAULT_SNAPSHOT_EVERY = 100;
const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
const DEFAULT_LOCK_STALE_MS = 5_000;
const DEFAULT_GROUP_COMMIT_MS = 0;
const DEFAULT_INLINE_SYNC_MS = 2;
const DEFAULT_LEASE_MS = 300_000;
/** The index log is compacted when it grows past twice its live size plus this. */
const DEFAULT_INDEX_SLACK_BYTES = 4 * 1024 * 1024;

/** Options after validation, defaults applied, `dir` absolute. */
export interface ResolvedOptions {
  dir: string;
  snapshotEvery: number;
  lockTimeoutMs: number;
  lockStaleMs: number;
  indexSlackBytes: number;
  /** fsync snapshots, new files' folders and (unless `groupCommit`) each append. */
  sync: boolean;
  /** `sync: 'group'`: appends are fsync'd by the store's next group flush. */
  groupCommit: boolean;
  groupCommitMs: number;
  inlineSyncMs: number;
  leaseMs: number;
}

/** Validates `options` and applies the defaults. Throws `invalid_argument` naming the option. */
export function resolveOptions(options: FileStoreOptions): ResolvedOptions {
  assertKnownKeys(errors, options, OPTION_KEYS, 'FileStore options');
  const dir = options.dir ?? defaultFileStoreDir();
  if (typeof dir !== 'string' || dir === '' || dir.includes('\u0000')) {
    throw errors.invalid('FileStore: dir must be a non-empty path');
  }
  const every = options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
  if (!Number.isSafeInteger(every) || every < 1) {
    throw errors.invalid(`FileStore: snapshotEvery must be a positive integer, got ${every}`);
  }
  const timeout = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0) {
    throw errors.invalid(`FileStore: lockTimeoutMs must be a number >= 0, got ${timeout}`);
  }
  const stale = options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS;
  if (typeof stale !== 'number' || !Number.isFinite(stale) || stale < 100) {
    throw errors.invalid(`FileStore: lockStaleMs must be a number >= 100, got ${stale}`);
  }
  const slack = options.indexSlackBytes ?? DEFAULT_INDEX_SLACK_BYTES;
  if (!Number.isSafeInteger(slack) || slack < 0) {
    throw errors.invalid(`FileStore: indexSlackBytes must be an integer >= 0, got ${slack}`);
  }
  if (options.sync !== undefined && typeof options.sync !== 'boolean' && options.sync !== 'group') {
    throw errors.invalid(
      `FileStore: sync must be true, false or 'group', got ${String(options.sync)}`,
    );
  }
  const groupMs = msFrom('groupCommitMs', options.groupCommitMs ?? DEFAULT_GROUP_COMMIT_MS, 1000);
  const inlineMs = msFrom('inlineSyncMs', options.inlineSyncMs ?? DEFAULT_INLINE_SYNC_MS, 100);
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (typeof leaseMs !== 'number' || !Number.isFinite(leaseMs) || leaseMs < 0) {
    throw errors.invalid(`FileStore: leaseMs must be a number >= 0, got ${leaseMs}`);
  }
  return {
    dir: resolve(dir),
    snapshotEvery: every,
    lockTimeoutMs: timeout,
    lockStaleMs: stale,
    indexSlackBytes: slack,
    sync: options.sync !== false,
    groupCommit: options.sync === 'group',
    groupCommitMs: groupMs,
    inlineSyncMs: inlineMs,
    leaseMs,
  };
}

/** `value` when it is a number from 0 to `max`; else `invalid_argument` naming `name`. */
function msFrom(name: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    throw errors.invalid(`FileStore: ${name} must be a number from 0 to ${max}, got ${value}`);
  }
  return value;
}
