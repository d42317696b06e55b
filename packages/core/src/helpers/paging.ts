import type { Store } from '../contracts.js';
import { errorsFor } from '../errors.js';
import { compareListOrder } from '../session.js';
import type { ListCursor, ListOptions, SessionSummary } from '../types.js';
import { MAX_LIST_LIMIT } from '../validate.js';

const errors = errorsFor('core');

/**
 * Throws `invalid_argument` unless `pageSize` is an integer from 1 to `MAX_LIST_LIMIT`
 * (1000). `where` names the caller in the message (`"exportSessions"`).
 */
export function assertPageSize(pageSize: unknown, where: string): asserts pageSize is number {
  if (
    typeof pageSize !== 'number' ||
    !Number.isInteger(pageSize) ||
    pageSize < 1 ||
    pageSize > MAX_LIST_LIMIT
  ) {
    throw errors.invalid(
      `${where}: pageSize must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${String(pageSize)}`,
    );
  }
}

/** Options of `listPages` and `listRows`. */
export interface KeysetWalkOptions {
  /** Rows per `list` call; checked with `assertPageSize`. */
  pageSize: number;
  /** The caller's name, for error messages (`"enforceMax"`). */
  where: string;
  /** Start strictly after this key. Default: the newest row. */
  start?: ListCursor | undefined;
  /** `list`'s `folder` filter. Default: every folder. */
  folder?: string | undefined;
}

/**
 * Every summary of `store`'s listing (archived included), newest first (`updatedAt` desc,
 * then `id` desc), in pages of `pageSize` with keyset paging (`startAfter` = the last row
 * of the previous page). Empty pages are not yielded.
 *
 * Each row must sort strictly after the one before it (and the first row of a page
 * strictly after the cursor), so a store whose cursor does not advance, or whose order is
 * broken, fails with `corrupt` instead of looping forever or repeating rows. Memory: one
 * page. Throws whatever `store.list` throws.
 */
export async function* listPages<M>(
  store: Store<M>,
  options: KeysetWalkOptions,
): AsyncGenerator<SessionSummary[], undefined> {
  const { pageSize, where, folder } = options;
  assertPageSize(pageSize, where);
  let cursor = options.start;
  for (;;) {
    const query: ListOptions = { includeArchived: true, limit: pageSize };
    if (folder !== undefined) query.folder = folder;
    if (cursor !== undefined) query.startAfter = cursor;
    const page = await store.list(query);
    let prev = cursor;
    for (const s of page) {
      if (prev !== undefined && compareListOrder(s, prev, false) <= 0) {
        throw errors.make(
          'corrupt',
          `${where}: the store listed "${s.id}" out of order (updatedAt desc, id desc) — its keyset paging is broken`,
        );
      }
      prev = s;
    }
    if (page.length > 0) yield page;
    if (page.length < pageSize || prev === undefined) return undefined;
    cursor = { updatedAt: prev.updatedAt, id: prev.id };
  }
}

/** `listPages`, one summary at a time. */
export async function* listRows<M>(
  store: Store<M>,
  options: KeysetWalkOptions,
): AsyncGenerator<SessionSummary, undefined> {
  for await (const page of listPages(store, options)) yield* page;
  return undefined;
}
