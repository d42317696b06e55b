// Folding a session's log into a new snapshot: when it is due, and how (splicing the
// stored bytes without parsing the messages, or through a full load).

import { readFileSync } from 'node:fs';
import type { HistoryLineage } from '@sessionkit/core/adapter';
import { readLineage } from '@sessionkit/core/adapter';
import { parseFrames } from '../format/frame.js';
import { type BodyPiece, spliceBodies, type TabledBody } from '../format/message-offsets.js';
import {
  type HeaderJson,
  headerShapeProblem,
  type LogMeta,
  type SnapshotMeta,
} from '../format/records.js';
import { compactSearchFile } from '../search/search-file.js';
import type { StoreContext } from '../store/context.js';
import { readFullSession } from './full-read.js';
import { operationsOf } from './operations.js';
import type { SessionTip } from './session-tip.js';
import { writeSnapshot } from './snapshot.js';

/** A log this large is always folded into a new snapshot (unless the snapshot is larger). */
const LOG_FOLD_BYTES = 8 * 1024 * 1024;

/**
 * Whether the commit that made `tip` should fold the log into a new snapshot: when the log
 * has at least `snapshotEvery` records and is as large as the snapshot, or is 8 MiB and the
 * snapshot's size, so a load reads at most twice the snapshot and each byte is rewritten
 * about once. A snapshot of an older format (no offset table) is upgraded by the first
 * commit. Reparent records never fold (they keep the revision).
 */
export function foldDue(tip: SessionTip, kind: LogMeta['kind'], snapshotEvery: number): boolean {
  const logBytes = tip.logSize;
  return (
    kind === 'commit' &&
    tip.header.revision > tip.snapRev &&
    (!tip.tabled ||
      (tip.logRecords >= snapshotEvery && logBytes >= tip.snapBytes) ||
      logBytes >= Math.max(tip.snapBytes, LOG_FOLD_BYTES))
  );
}

/**
 * Folds the log of `tip` into a new snapshot. The record that made it due is durable: a
 * fold that fails (a full disk, a damaged older record) must not report the commit as
 * failed. The log stays as it is, the cached tip is dropped (the next write re-reads the
 * folder) and a later commit folds. The caller holds the session lock.
 */
export async function foldLog(ctx: StoreContext, id: string, tip: SessionTip): Promise<void> {
  try {
    // The new snapshot carries the operation ids of the records it folds.
    const ops = await operationsOf(ctx, id, tip);
    const spliced = spliceFromFiles(ctx, id, tip);
    if (spliced) {
      await writeSnapshot(ctx, id, spliced.header, spliced.lineage, spliced.tabled, ops);
    } else {
      const full = await readFullSession(ctx, id);
      await writeSnapshot(ctx, id, full.header, full.lineage, full.messages, ops);
    }
    // The search text is indexed once per fold: its chunks become one.
    compactSearchFile(ctx, id);
  } catch {
    ctx.forgetTip(id);
  }
}

/**
 * The snapshot and log of `tip` spliced into one snapshot body with its offset table
 * (`spliceFold`); `undefined` when they cannot be (the caller folds through a full
 * load). The caller holds the session lock (the files cannot change).
 */
function spliceFromFiles(
  ctx: StoreContext,
  id: string,
  tip: SessionTip,
): { header: HeaderJson; lineage: HistoryLineage; tabled: TabledBody } | undefined {
  const sp = ctx.sessionPaths(id);
  let snapBuf: Buffer;
  let logBuf: Buffer;
  try {
    snapBuf = readFileSync(sp.snapshot(tip.snapRev));
    logBuf = readFileSync(sp.log(tip.snapRev));
  } catch {
    return undefined;
  }
  ctx.stats.transcriptReads++;
  ctx.stats.transcriptBytesRead += snapBuf.length + logBuf.length;
  return spliceFold(id, snapBuf, logBuf, tip);
}

/** Drops the last `drop` messages of `pieces` (whole pieces, then a prefix of one). */
function cutPieces(pieces: BodyPiece[], drop: number): void {
  for (let left = drop; left > 0; ) {
    const last = pieces[pieces.length - 1];
    if (!last) return; // cannot be: the counts add up; spliceBodies's count check catches it
    const kept = last.keep ?? last.count;
    if (kept <= left) {
      pieces.pop();
      left -= kept;
    } else {
      last.keep = kept - left;
      left = 0;
    }
  }
}

/**
 * The messages of a snapshot (`snapBuf`) and its log (`logBuf`, valid up to
 * `tip.logSize`) as one snapshot body with its offset table, built from the stored bytes
 * without parsing the messages: every body is a JSON array written by `JSON.stringify`
 * and checked against its CRC here, the snapshot's table and the records' `sizes` give
 * each message's bytes, so `[` + the snapshot's elements + each record's elements + `]`
 * is the array a full load would build. Checks what a load checks of metas (record
 * order, headers, revisions, message counts adding up); any doubt (or a snapshot or
 * record of an older format) → `undefined`, and the caller folds through a full load,
 * which reports the problem. Pure.
 */
export function spliceFold(
  id: string,
  snapBuf: Buffer,
  logBuf: Buffer,
  tip: { logSize: number; logRecords: number; messageCount: number },
): { header: HeaderJson; lineage: HistoryLineage; tabled: TabledBody } | undefined {
  const snap = parseFrames<SnapshotMeta>(snapBuf);
  const [sf, tf] = snap.frames;
  if (!sf || !tf || snap.frames.length !== 2 || snap.torn || snap.corrupt) return undefined;
  if (sf.meta.kind !== 'snapshot' || headerShapeProblem(sf.meta.header, id)) return undefined;
  const pieces: BodyPiece[] = [
    {
      bytes: snapBuf.subarray(sf.bodyStart, sf.bodyEnd),
      count: sf.meta.messageCount,
      table: snapBuf.subarray(tf.bodyStart, tf.bodyEnd),
    },
  ];
  let header = sf.meta.header;
  let lineage = readLineage(sf.meta.lineage);
  let count = sf.meta.messageCount;
  const log = parseFrames<LogMeta>(logBuf.subarray(0, tip.logSize));
  if (log.corrupt || log.torn || log.frames.length !== tip.logRecords) return undefined;
  let seq = 0;
  for (const f of log.frames) {
    const m = f.meta;
    seq++;
    if (m.seq !== seq || headerShapeProblem(m.header, id) || m.header.revision < header.revision)
      return undefined;
    if (m.appended === 0 && f.bodyEnd !== f.bodyStart) return undefined;
    if (m.truncate !== undefined) {
      // A truncation keeps a prefix: the pieces before it are cut, their bytes unparsed.
      if (!Number.isSafeInteger(m.truncate) || m.truncate < 0 || m.truncate > count)
        return undefined;
      cutPieces(pieces, count - m.truncate);
      count = m.truncate;
    }
    if (m.appended > 0) {
      pieces.push({
        bytes: logBuf.subarray(f.bodyStart, f.bodyEnd),
        count: m.appended,
        sizes: m.sizes,
      });
    }
    count += m.appended;
    if (count !== m.messageCount) return undefined;
    header = m.header;
    lineage = readLineage(m.lineage);
  }
  if (count !== tip.messageCount) return undefined;
  const tabled = spliceBodies(pieces);
  return tabled && tabled.count === count ? { header, lineage, tabled } : undefined;
}
