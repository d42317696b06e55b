// Rebuilding `index.log` (and every `search.txt`) from the sessions themselves: `repair()`,
// a format upgrade, and a reader that finds the index missing, damaged or abandoned.

import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { RepairReport } from '@sessionkit/core';
import { isSessionKitError, isValidId } from '@sessionkit/core';
import { searchTextOf, withFileLock } from '@sessionkit/core/adapter';
import { type Frame, parseFrames } from '../format/frame.js';
import { entryOf, type IndexEntryJson, type IndexMeta } from '../format/records.js';
import { type DecodedSearch, decodeSearchFile } from '../format/search-codec.js';
import { isEnoent, statOrUndefined } from '../io/fs-helpers.js';
import { writeSearchFile } from '../search/search-file.js';
import { readFullSession } from '../session/full-read.js';
import { withSessionLock } from '../session/lock.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { replaceIndexLocked } from './rewrite.js';
import { applyIndexRecord, emptyIndex, serializeIndex } from './state.js';

/**
 * The repair pass: every session folder read in full, the index rewritten. Holds the
 * index lock for the whole pass, so no compaction replaces the index during the scan and
 * every record appended meanwhile is found after the position noted at the start.
 */
export async function rebuildIndex(ctx: StoreContext): Promise<RepairReport> {
  return withFileLock(
    ctx.paths.indexLock,
    async () => {
      const was = ctx.rewritingIndex;
      ctx.rewritingIndex = true; // no compaction from this store while it holds the lock
      try {
        return await rebuildLocked(ctx);
      } finally {
        ctx.rewritingIndex = was;
      }
    },
    ctx.lockOptions,
  );
}

async function rebuildLocked(ctx: StoreContext): Promise<RepairReport> {
  const startStat = await statOrUndefined(ctx.paths.index);
  const { fresh, skippedCorrupt } = await scanSessions(ctx);
  let fixed = 0;
  await replaceIndexLocked(ctx, (buf, ino) => {
    // Records other writers appended while we scanned describe newer states: keep them.
    const from =
      startStat && Number(startStat.ino) === ino
        ? Math.min(startStat.size, buf.length)
        : buf.length;
    const merged = withLaterRecords(fresh, buf, from);
    fixed = merged.fixed;
    return serializeIndex(merged.final);
  });
  ctx.index = emptyIndex();
  await emptyTrash(ctx);
  return { rebuilt: fresh.size, skippedCorrupt, indexEntriesFixed: fixed };
}

/**
 * Reads every session in full: its index entry, and its search text rewritten when it
 * differs. Unreadable sessions are reported, folders without a snapshot skipped.
 */
async function scanSessions(ctx: StoreContext): Promise<{
  fresh: Map<string, IndexEntryJson>;
  skippedCorrupt: RepairReport['skippedCorrupt'];
}> {
  const fresh = new Map<string, IndexEntryJson>();
  const skippedCorrupt: RepairReport['skippedCorrupt'] = [];
  let names: string[] = [];
  try {
    names = await fsp.readdir(ctx.paths.sessions);
  } catch (e) {
    if (!isEnoent(e)) throw e;
  }
  names.sort();
  for (const id of names) {
    if (!isValidId(id)) continue;
    try {
      const { header, messages } = await readFullSession(ctx, id);
      fresh.set(id, entryOf(header, messages.length));
      await refreshSearchFile(ctx, id, searchTextOf(messages));
    } catch (e) {
      if (isSessionKitError(e, 'not_found')) continue;
      if (isSessionKitError(e, 'corrupt')) {
        skippedCorrupt.push({ id, reason: e.message.replace(`${errors.prefix} `, '') });
        continue;
      }
      throw e;
    }
  }
  return { fresh, skippedCorrupt };
}

/**
 * Rewrites the session's `search.txt` when it is not `text`. Also rewrites files of format
 * 2 (messages separated by "\n", so a query could span two of them) and of format 3
 * (uncompressed), and files with a damaged chunk.
 */
async function refreshSearchFile(ctx: StoreContext, id: string, text: string): Promise<void> {
  let current: DecodedSearch | undefined;
  try {
    current = decodeSearchFile(await fsp.readFile(ctx.sessionPaths(id).search));
  } catch (e) {
    if (!isEnoent(e)) throw e;
  }
  // Format 3 files (no chunks) are rewritten too, compressed.
  if (current !== undefined && current.text === text && current.chunks > 0 && !current.damaged)
    return;
  if (current !== undefined && text === '' && current.text === '' && !current.damaged) return;
  // Under the session's lock (a concurrent commit's search append is not lost), from the
  // transcript as it is then.
  const rewrite = async () => writeSearchFile(ctx, id, (await readFullSession(ctx, id)).messages);
  if (ctx.lockedSessions.has(id)) {
    await rewrite();
    return;
  }
  try {
    await withSessionLock(ctx, id, rewrite);
  } catch (e) {
    // Busy for longer than the lock timeout (e.g. its holder waits for the index lock held
    // here): the search text is derived data, the next repair fixes it.
    if (!isSessionKitError(e, 'unavailable')) throw e;
  }
}

/**
 * The rebuilt entries `fresh` with the records of the current index from byte `from` on
 * applied over them, and how many entries differ from the current index's.
 */
function withLaterRecords(
  fresh: Map<string, IndexEntryJson>,
  buf: Buffer,
  from: number,
): { final: Map<string, IndexEntryJson>; fixed: number } {
  const parsed = parseFrames<IndexMeta>(buf);
  const old = emptyIndex();
  for (const f of parsed.frames) applyIndexRecord(old, f.meta);
  const later = parsed.frames.filter((f: Frame<IndexMeta>) => f.start >= from);
  const final = new Map(fresh);
  for (const f of later) {
    const r = f.meta;
    if (r.op === 'put') final.set(r.entry.id, r.entry);
    else if (r.op === 'del') final.delete(r.id);
  }
  let fixed = 0;
  for (const [id, entry] of final) {
    if (!isDeepStrictEqual(old.entries.get(id), entry)) fixed++;
  }
  for (const id of old.entries.keys()) if (!final.has(id)) fixed++;
  if (parsed.corrupt) fixed++;
  return { final, fixed };
}

/** Removes half-deleted sessions of a killed delete. */
async function emptyTrash(ctx: StoreContext): Promise<void> {
  try {
    for (const name of await fsp.readdir(ctx.paths.trash)) {
      await fsp.rm(join(ctx.paths.trash, name), { recursive: true, force: true });
    }
  } catch (e) {
    if (!isEnoent(e)) throw e;
  }
}
