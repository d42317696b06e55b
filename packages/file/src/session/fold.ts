// Folding a session's log into a new snapshot from the stored bytes, without parsing
// the messages.

import type { HistoryLineage } from '@sessionkit/core/adapter';
import { readLineage } from '@sessionkit/core/adapter';
import { type BodyPiece, spliceBodies, type TabledBody } from '../format/message-offsets.js';
import {
  type HeaderJson,
  headerProblem,
  type LogMeta,
  parseFrames,
  type SnapshotMeta,
} from '../layout.js';

/**
 * The messages of a snapshot (`snapBuf`) and its log (`logBuf`, valid up to
 * `head.logSize`) as one snapshot body with its offset table, built from the stored bytes
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
  head: { logSize: number; logRecords: number; messageCount: number },
): { header: HeaderJson; lineage: HistoryLineage; tabled: TabledBody } | undefined {
  const snap = parseFrames<SnapshotMeta>(snapBuf);
  const [sf, tf] = snap.frames;
  if (!sf || !tf || snap.frames.length !== 2 || snap.torn || snap.corrupt) return undefined;
  if (sf.meta.kind !== 'snapshot' || headerProblem(sf.meta.header, id)) return undefined;
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
  const log = parseFrames<LogMeta>(logBuf.subarray(0, head.logSize));
  if (log.corrupt || log.torn || log.frames.length !== head.logRecords) return undefined;
  let seq = 0;
  for (const f of log.frames) {
    const m = f.meta;
    seq++;
    if (m.seq !== seq || headerProblem(m.header, id) || m.header.revision < header.revision)
      return undefined;
    if (m.appended === 0 && f.bodyEnd !== f.bodyStart) return undefined;
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
  if (count !== head.messageCount) return undefined;
  const tabled = spliceBodies(pieces);
  return tabled && tabled.count === count ? { header, lineage, tabled } : undefined;
}
