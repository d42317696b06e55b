// The commit log (`log-<rev>.skr`): appending one framed record after the snapshot
// `<rev>`, and finding the last good record from the file's end.

import { constants, fstatSync, ftruncateSync, openSync } from 'node:fs';
import type { CommitResult } from '@sessionkit/core';
import { type HistoryLineage, readLineage } from '@sessionkit/core/adapter';
import {
  decodePrefix,
  encodeFrame,
  PREFIX_BYTES,
  parseFrames,
  TAIL_BYTES,
  TAIL_MAGIC,
} from '../format/frame.js';
import { encodeAppendBody } from '../format/message-offsets.js';
import { type HeaderJson, headerProblem, type LogMeta } from '../format/records.js';
import { FORMAT_VERSION } from '../format/version.js';
import { readFrameMeta } from '../io/frame-meta.js';
import { closeQuietly, writeAll } from '../io/fs-helpers.js';
import type { Fd } from '../io/sync-fd.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { foldDue, foldLog } from './fold.js';
import { noteAppended } from './operations.js';
import type { SessionTip } from './session-tip.js';

/** A session's state after a record: what its meta carries. */
export interface StateAfter {
  header: HeaderJson;
  lineage: HistoryLineage;
  messageCount: number;
}

/** What a commit's record carries besides its messages. */
export interface CommitRecordParts {
  /** Keep only this many of the messages before the record (a commit's `truncate`). */
  truncate?: number | undefined;
  /** The commit's operation id, and the result a repeat of it resolves with. */
  operationId?: string | undefined;
  result: CommitResult;
}

/**
 * Appends one record to the current log (truncating a torn tail first) and fsyncs it;
 * folds the log into a new snapshot when it has grown enough. The caller holds the lock
 * and has just read `tip` as a writer. `whileSyncing` (derived data: the search file)
 * runs on this thread while a thread-pool fdatasync runs (after an inline one); its error
 * is thrown once the record is durable and the cached tip is current. `commit` (a
 * commit's record): its truncation and operation id, written in the record itself.
 */
export async function appendLogRecord(
  ctx: StoreContext,
  id: string,
  tip: SessionTip,
  after: StateAfter,
  appended: unknown[],
  kind: LogMeta['kind'],
  whileSyncing?: () => void,
  commit?: CommitRecordParts,
): Promise<void> {
  const sp = ctx.sessionPaths(id);
  const encoded = appended.length > 0 ? encodeAppendBody(appended) : undefined;
  const meta: LogMeta = {
    v: FORMAT_VERSION,
    kind,
    seq: tip.logRecords + 1,
    header: after.header,
    messageCount: after.messageCount,
    appended: appended.length,
    lineage: after.lineage,
  };
  if (encoded) meta.sizes = encoded.sizes;
  if (commit?.truncate !== undefined) meta.truncate = commit.truncate;
  if (commit?.operationId !== undefined) meta.op = commit.operationId;
  const frame = encodeFrame(meta, encoded?.body);
  const { ino, sideError } = await writeRecord(
    ctx,
    id,
    sp.log(tip.snapRev),
    tip,
    frame,
    whileSyncing,
  );
  const next: SessionTip = {
    header: after.header,
    lineage: after.lineage,
    messageCount: after.messageCount,
    snapRev: tip.snapRev,
    tabled: tip.tabled,
    snapIno: tip.snapIno,
    snapBytes: tip.snapBytes,
    logIno: ino,
    logSize: tip.logSize + frame.length,
    logFileSize: tip.logSize + frame.length,
    logRecords: meta.seq,
    verified: true,
  };
  ctx.setWriterTip(id, next);
  if (commit) noteAppended(ctx, id, tip, next, commit.operationId, commit.result);
  if (foldDue(next, kind, ctx.options.snapshotEvery)) await foldLog(ctx, id, next);
  if (sideError) throw sideError.e;
}

/**
 * Writes `frame` at the end of the log at `path` (a synchronous open/write/close:
 * microseconds on a local disk) and waits until the store's commit journal holds it
 * durably (`sync: true`: its own journal write and fdatasync; `'group'`: the next flush;
 * `false`: nothing). The caller holds the lock and has just checked the log's inode
 * (`tip`), so no other writer can have replaced it: a known inode needs no fstat. The
 * descriptor is kept open for the next commit (`KeptFiles.take` hands it back only for
 * the same inode).
 */
async function writeRecord(
  ctx: StoreContext,
  id: string,
  path: string,
  tip: SessionTip,
  frame: Buffer,
  whileSyncing: (() => void) | undefined,
): Promise<{ ino: number; sideError: { e: unknown } | undefined }> {
  const kept = tip.logIno !== 0 ? ctx.keptFiles.take(path, tip.logIno) : undefined;
  // A log known to exist is opened without O_CREAT (a lookup, not a create, in its folder).
  const fd =
    kept ?? openSync(path, tip.logIno !== 0 ? constants.O_WRONLY | constants.O_APPEND : 'a', 0o600);
  let ino = tip.logIno;
  let sideError: { e: unknown } | undefined;
  try {
    // Checked in the same synchronous step as the journal's: a store closed meanwhile
    // writes nothing, and one not closed yet has the journal wait for this commit.
    if (ctx.closed) throw errors.closed();
    if (tip.logFileSize > tip.logSize) ftruncateSync(fd, tip.logSize);
    writeAll(fd, frame);
    if (ino === 0) ino = Number(fstatSync(fd).ino);
    // The journal's flush makes the record durable (`io/commit-journal.ts`): the log
    // itself is fdatasync'd only at the journal's checkpoints.
    const syncing = ctx.journal?.commit(id, tip.snapRev, tip.logSize, frame, path);
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
  ctx.keepFile(path, fd, ino);
  return { ino, sideError };
}

/**
 * The last good log record as a tip based on `base` (the snapshot's), found from the
 * file's end, or by a forward scan when the tail is torn; `undefined` for an empty log.
 * With `verifyBody` (writers) the last record's body checksum is checked too.
 */
export async function readLastRecord(
  ctx: StoreContext,
  id: string,
  handle: Fd,
  size: number,
  base: SessionTip,
  verifyBody: boolean,
): Promise<SessionTip | undefined> {
  if (size === 0) return undefined;
  const toTip = (meta: LogMeta, end: number): SessionTip => {
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
  const fromEnd = await lastRecordFromEnd(ctx, handle, size, verifyBody);
  if (fromEnd) return toTip(fromEnd, size);
  // The tail is torn: scan forward over prefixes and metas to the last good record.
  const buf = Buffer.alloc(size);
  await handle.read(buf, 0, size, 0);
  ctx.stats.transcriptReads++;
  const parsed = parseFrames<LogMeta>(buf);
  if (parsed.corrupt) throw errors.corrupt(id, `log-${base.snapRev}.skr: ${parsed.corrupt}`);
  const last = parsed.frames[parsed.frames.length - 1];
  if (!last) return { ...base, logSize: 0 };
  return toTip(last.meta, parsed.validEnd);
}

/** The meta of the record that ends the file, found through its tail; `undefined` if torn. */
async function lastRecordFromEnd(
  ctx: StoreContext,
  handle: Fd,
  size: number,
  verifyBody: boolean,
): Promise<LogMeta | undefined> {
  if (size < PREFIX_BYTES + TAIL_BYTES) return undefined;
  const tail = Buffer.alloc(TAIL_BYTES);
  await handle.read(tail, 0, TAIL_BYTES, size - TAIL_BYTES);
  const total = tail.readUInt32LE(0);
  if (tail.readUInt32LE(4) !== TAIL_MAGIC || total > size || total < PREFIX_BYTES + TAIL_BYTES)
    return undefined;
  if (!verifyBody) {
    // Readers only need the header: the record's prefix and meta, not its body.
    const prefixBuf = Buffer.alloc(PREFIX_BYTES);
    await handle.read(prefixBuf, 0, PREFIX_BYTES, size - total);
    const prefix = decodePrefix(prefixBuf);
    if (prefix && prefix.total === total) {
      const meta = await readFrameMeta<LogMeta>(handle, prefix, size - total);
      if (meta) return meta;
    }
  }
  // Read the whole last record: its body checksum tells a complete append from one a
  // power loss left half-written.
  const buf = Buffer.alloc(total);
  await handle.read(buf, 0, total, size - total);
  ctx.stats.transcriptReads++;
  const parsed = parseFrames<LogMeta>(buf);
  const frame = parsed.frames[0];
  if (frame && parsed.frames.length === 1 && !parsed.torn && !parsed.corrupt) return frame.meta;
  return undefined;
}
