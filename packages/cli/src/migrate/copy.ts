import { detectCapabilities, listRows, type ProgressOptions, type Store } from '@sessionkit/core';
import { CliError } from '../runtime/cli-error.js';
import { inBatches, settleAll } from './batches.js';
import { copySession } from './session-copy.js';

/** Options of `migrateSessions` and `verifyMigration`. */
export interface MigrateOptions extends ProgressOptions {
  /** Only sessions of this workspace folder. Default: every session. */
  folder?: string | undefined;
  /** Summaries per `list` call (1–1000). Default 200. */
  pageSize?: number | undefined;
  /**
   * Sessions copied (or compared) at once, to hide each store's round-trip latency.
   * Memory holds this many sessions. Default 8.
   */
  concurrency?: number | undefined;
}

/** What `migrateSessions` did. */
export interface MigrateResult {
  /** Sessions the source listed when the copy started. */
  total: number;
  /** Created in the target by this run. */
  copied: number;
  /** Found in the target from an earlier run and completed. */
  resumed: number;
  /** Deleted from the source while the copy ran. */
  vanished: number;
}

export const DEFAULT_PAGE_SIZE = 200;
export const DEFAULT_CONCURRENCY = 8;

/**
 * Throws when the source keeps something the target cannot (runtime status or events),
 * since the copy would silently drop it.
 */
export function assertTargetCanKeep(source: Store<unknown>, target: Store<unknown>): void {
  const targetHas = new Set(detectCapabilities(target));
  for (const capability of ['RuntimeStatusStore', 'EventLog'] as const) {
    if (detectCapabilities(source).includes(capability) && !targetHas.has(capability)) {
      throw new CliError(
        `the target store has no ${capability}, so the source's ${capability === 'EventLog' ? 'events' : 'runtime status'} would be lost — pick a target that implements it`,
      );
    }
  }
}

/** How many sessions `store` lists (archived included), in keyset pages. */
export async function countSessions(
  store: Store<unknown>,
  options: MigrateOptions,
  phase = 'count',
): Promise<number> {
  let n = 0;
  for await (const _row of listRows(store, walkOptions(options, 'count'))) {
    options.signal?.throwIfAborted();
    n++;
    if (n % 1000 === 0) options.onProgress?.({ phase, done: n });
  }
  options.onProgress?.({ phase, done: n });
  return n;
}

export function walkOptions(options: MigrateOptions, where: string) {
  return {
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
    where: `migrate ${where}`,
    folder: options.folder,
  };
}

/**
 * Copies every session of `source` (or of one folder) into `target`, keeping ids,
 * `createdAt`/`updatedAt`/`archivedAt`, parent links and branch points (so trees are
 * rebuilt), counters, metadata, state, runtime status and events (re-appended in order:
 * the target stamps their `at`). Streams: one page of summaries and one session are in
 * memory at a time (`concurrency` sessions are copied at once), whatever the store's size.
 *
 * Resumable: `signal` stops it between two batches of sessions (the call rejects with the signal's
 * reason), and a later call with the same stores completes sessions an earlier run left
 * and skips the ones it finished, so nothing is duplicated. `onProgress` reports
 * `count` (the source's size), then `copy` per session with the total.
 *
 * Throws a `CliError` when the target lacks a capability the source uses or holds a
 * different session under a copied id, and whatever the stores throw.
 */
export async function migrateSessions(
  source: Store<unknown>,
  target: Store<unknown>,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  assertTargetCanKeep(source, target);
  const total = await countSessions(source, options);
  const result: MigrateResult = { total, copied: 0, resumed: 0, vanished: 0 };
  let done = 0;
  const rows = listRows(source, walkOptions(options, 'copy'));
  for await (const batch of inBatches(rows, options.concurrency ?? DEFAULT_CONCURRENCY)) {
    // A safe point: every session of the previous batch is complete in the target.
    options.signal?.throwIfAborted();
    await settleAll(batch, async (row) => {
      const outcome = await copySession(source, target, row.id);
      result[outcome]++;
      done++;
      options.onProgress?.({ phase: 'copy', done, total: Math.max(total, done) });
    });
  }
  return result;
}
