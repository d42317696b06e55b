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
const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
const DEFAULT_LOCK_STALE_MS = 5_000;
/** The index log is compacted when it grows past twice its live size plus this. */
const DEFAULT_INDEX_SLACK_BYTES = 4 * 1024 * 1024;

/** Options after validation, defaults applied, `dir` absolute. */
export interface ResolvedOptions {
  dir: string;
  snapshotEvery: number;
  lockTimeoutMs: number;
  lockStaleMs: number;
  indexSlackBytes: number;
  sync: boolean;
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
  if (options.sync !== undefined && typeof options.sync !== 'boolean') {
    throw errors.invalid('FileStore: sync must be a boolean');
  }
  return {
    dir: resolve(dir),
    snapshotEvery: every,
    lockTimeoutMs: timeout,
    lockStaleMs: stale,
    indexSlackBytes: slack,
    sync: options.sync ?? true,
  };
}
