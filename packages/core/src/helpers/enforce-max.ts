import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Store } from '../contracts.js';
import { isPruner } from '../contracts.js';
import { errorsFor, isSessionKitError } from '../errors.js';
import { fsErrorToSessionKit } from '../fs/fs-errors.js';
import { compareListOrder, isSubSession } from '../session.js';
import type { ListCursor, Message } from '../types.js';
import { assertKnownKeys, assertMax } from '../validate.js';
import { assertPageSize, listPages, listRows } from './paging.js';
import {
  assertProgressOptions,
  PROGRESS_OPTION_KEYS,
  type ProgressOptions,
  stopIfAborted,
} from './progress.js';

const errors = errorsFor('core');

/** Default page size of the generic `enforceMax` scan. */
const ENFORCE_MAX_PAGE_SIZE = 500;

/** Options of the generic `enforceMax`. */
export interface EnforceMaxOptions extends ProgressOptions {
  /** Page size of each `list` call while scanning. Default 500 (at most 1000). */
  pageSize?: number;
  /** Folder for the private id spool. Default: the OS temp folder. */
  tmpDir?: string;
}

/** A pruning candidate as pass 1 saw it: its listing key and revision. */
interface Candidate {
  updatedAt: number;
  revision: number;
  id: string;
}

/**
 * Keeps the newest `max` root sessions (by `updatedAt`, then id) and deletes the older
 * roots. Sub-sessions (with a `parentId`) are never selected; deleting a root promotes its
 * children as `Store.delete` does. `max <= 0` means unlimited: nothing is read or deleted.
 *
 * A store that is a `Pruner` does this natively (atomically where the backend allows) and
 * its result is returned as is. Any other store is handled in two passes over its listing
 * in bounded pages:
 * 1. the whole listing (archived included) is scanned newest first; every root after the
 *    first `max` is written to a private spool file (`updatedAt`, revision, id), so memory
 *    stays flat however many sessions there are (disk: about 30 bytes plus the id per
 *    candidate, in a 0700 folder holding one 0600 file, removed on return and on error);
 * 2. the spool is merge-joined with a second scan in the same order, and a candidate is
 *    deleted only if the listing still shows it at the same `updatedAt` with the same
 *    revision. Candidates that changed or vanished in between are skipped, and roots
 *    created meanwhile are not considered, so a later call may still find work: the base
 *    contract cannot make the selection atomic.
 *
 * Never loads a session (pruning does not read message bodies). Returns how many sessions
 * were deleted.
 *
 * Defaults: `pageSize` 500 (1–1000), `tmpDir` the OS temp folder.
 *
 * `onProgress` reports rows scanned (`{phase: "scan", done}`, per page) and sessions
 * deleted (`{phase: "delete", done}`). `signal` stops the generic path after a page of the
 * scan or before a delete, and the call rejects with `signal.reason`: what was deleted
 * stays deleted, the rest is left, and a later call finishes the job. A `Pruner` store's
 * native `enforceMax` is one call: the signal is only checked before it.
 *
 * Throws `invalid_argument` when `max` is not a safe integer, for bad or unknown options
 * and when the spool cannot be created in `tmpDir`; `unavailable` for other spool I/O
 * failures; `corrupt` when the store's listing breaks its own keyset order; and whatever
 * the store throws, except `not_found` from a delete (that candidate vanished: skipped).
 */
export async function enforceMax<M = Message>(
  store: Store<M>,
  max: number,
  options: EnforceMaxOptions = {},
): Promise<number> {
  assertMax(errors, max);
  assertKnownKeys(errors, options, ['pageSize', 'tmpDir', ...PROGRESS_OPTION_KEYS], 'enforceMax');
  assertProgressOptions('enforceMax', options);
  const pageSize = options.pageSize ?? ENFORCE_MAX_PAGE_SIZE;
  assertPageSize(pageSize, 'enforceMax');
  const tmpDir = options.tmpDir ?? tmpdir();
  if (typeof tmpDir !== 'string' || tmpDir === '' || tmpDir.includes('\u0000')) {
    throw errors.invalid('enforceMax: tmpDir must be a non-empty path');
  }
  if (max <= 0) return 0;
  stopIfAborted(options);
  if (isPruner(store)) return store.enforceMax(max);

  let dir: string;
  try {
    // mkdtemp creates the folder 0700: the spool names sessions and must stay private.
    dir = await mkdtemp(join(tmpDir, 'sessionkit-prune-'));
  } catch (e) {
    throw fsErrorToSessionKit(errors, e, `enforceMax: cannot create a spool folder in "${tmpDir}"`);
  }
  try {
    const spool = join(dir, 'candidates.tsv');
    const first = await spoolCandidates(store, max, pageSize, spool, options);
    if (first === undefined) return 0;
    return await deleteUnchanged(store, pageSize, spool, first, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Pass 1: streams every root after the first `max` into `file`, one
 * `updatedAt \t revision \t id` line each, in listing order. Returns the first candidate,
 * or `undefined` when there is none.
 */
async function spoolCandidates<M>(
  store: Store<M>,
  max: number,
  pageSize: number,
  file: string,
  progress: ProgressOptions,
): Promise<Candidate | undefined> {
  const seen: {
    rows: number;
    roots: number;
    first: Candidate | undefined;
    storeError?: unknown;
  } = { rows: 0, roots: 0, first: undefined };
  async function* lines(): AsyncGenerator<string> {
    try {
      for await (const page of listPages(store, { pageSize, where: 'enforceMax' })) {
        // One chunk per page: bounded by the page size, and far fewer writes than lines.
        let chunk = '';
        for (const s of page) {
          if (isSubSession(s)) continue;
          seen.roots++;
          if (seen.roots <= max) continue;
          const t = s.updatedAt.getTime();
          seen.first ??= { updatedAt: t, revision: s.revision, id: s.id };
          chunk += `${t}\t${s.revision}\t${s.id}\n`;
        }
        if (chunk !== '') yield chunk;
        seen.rows += page.length;
        progress.onProgress?.({ phase: 'scan', done: seen.rows });
        stopIfAborted(progress);
      }
    } catch (e) {
      // Remembered so the store's own error is not reported as a spool failure.
      seen.storeError = e;
      throw e;
    }
  }
  try {
    // pipeline pulls the next page only when the file stream has room (backpressure), and
    // closes the file on success and on error. 'wx': the folder is ours, the file is new.
    await pipeline(
      Readable.from(lines(), { objectMode: false }),
      createWriteStream(file, { flags: 'wx', mode: 0o600 }),
    );
  } catch (e) {
    if (e === seen.storeError) throw e;
    throw fsErrorToSessionKit(errors, e, 'enforceMax: cannot write the spool');
  }
  return seen.first;
}

/**
 * Pass 2: merge-joins the spool with a second scan of the listing, both newest first,
 * starting at the first candidate's key; deletes each candidate the listing still shows
 * at the same key with the same revision. Returns how many were deleted.
 */
async function deleteUnchanged<M>(
  store: Store<M>,
  pageSize: number,
  file: string,
  first: Candidate,
  progress: ProgressOptions,
): Promise<number> {
  const input = createReadStream(file, { encoding: 'utf8' });
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const spooled = reader[Symbol.asyncIterator]();
  const nextLine = async (): Promise<IteratorResult<string>> => {
    try {
      return await spooled.next();
    } catch (e) {
      throw fsErrorToSessionKit(errors, e, 'enforceMax: cannot read the spool');
    }
  };
  // The cursor `(updatedAt + 1, "")` sorts just before every row with `updatedAt`, so the
  // scan starts with the first candidate's millisecond (`""` sorts before every id).
  const start: ListCursor | undefined =
    first.updatedAt + 1 <= MAX_DATE_MS
      ? { updatedAt: new Date(first.updatedAt + 1), id: '' }
      : undefined;
  const listing = listRows(store, { pageSize, where: 'enforceMax', start });
  let deleted = 0;
  let lineNo = 0;
  try {
    let row = await listing.next();
    for (let line = await nextLine(); !line.done; line = await nextLine()) {
      lineNo++;
      const c = parseCandidate(line.value, lineNo);
      // Rows before the candidate are kept roots, sub-sessions or sessions that moved.
      while (!row.done && compareListOrder(row.value, c, false) < 0) row = await listing.next();
      if (row.done || compareListOrder(row.value, c, false) > 0) continue; // changed or gone
      const s = row.value;
      row = await listing.next();
      if (s.id !== c.id || s.revision !== c.revision || isSubSession(s)) continue;
      stopIfAborted(progress);
      try {
        await store.delete(c.id);
        deleted++;
        progress.onProgress?.({ phase: 'delete', done: deleted });
      } catch (e) {
        // Deleted by someone else since the listing was read: nothing left to prune.
        if (!isSessionKitError(e, 'not_found')) throw e;
      }
    }
  } finally {
    reader.close();
    input.destroy();
    await listing.return(undefined);
  }
  return deleted;
}

/** Largest valid `Date` in milliseconds. */
const MAX_DATE_MS = 8.64e15;

function parseCandidate(line: string, lineNo: number): Candidate {
  const [t, rev, id, ...rest] = line.split('\t');
  const updatedAt = Number(t);
  const revision = Number(rev);
  if (
    rest.length > 0 ||
    !id ||
    !Number.isSafeInteger(updatedAt) ||
    !Number.isSafeInteger(revision)
  ) {
    // Only this process writes the spool; a bad line means the file was tampered with.
    throw errors.make('corrupt', `enforceMax: spool line ${lineNo} is malformed`);
  }
  return { updatedAt, revision, id };
}
