// Snapshots (`snap-<rev>.skr`): writing one (and retiring the files it makes redundant),
// and reading a snapshot's meta without its messages.

import { chmodSync, promises as fsp, statSync } from 'node:fs';
import { type HistoryLineage, OperationLog } from '@sessionkit/core/adapter';
import { decodePrefix, PREFIX_BYTES, TAIL_BYTES } from '../format/frame.js';
import {
  encodeMessagesBody,
  encodeSnapshotFile,
  type TabledBody,
} from '../format/message-offsets.js';
import { type SessionPaths, scanSessionDir } from '../format/paths.js';
import {
  type HeaderJson,
  headerProblem,
  type SnapshotMeta,
  type StoredOperation,
} from '../format/records.js';
import { FORMAT_VERSION } from '../format/version.js';
import { readFrameMeta } from '../io/frame-meta.js';
import { isEnoent } from '../io/fs-helpers.js';
import { openFd } from '../io/sync-fd.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { listSessionFolder } from './folder.js';

/**
 * Writes `snap-<revision>.skr` (the snapshot frame and its message-offset table; temp +
 * fsync + rename + folder fsync), then removes older snapshots and logs, which it makes
 * redundant. The caller holds the session lock. `messages` may come already encoded with
 * their table (a fold splices stored bytes). `operations` is the session's operation log
 * after this write (`operationsOf`, plus the writing commit's own id), kept in the meta;
 * `undefined` for a history that has none (a new session).
 */
export async function writeSnapshot(
  ctx: StoreContext,
  id: string,
  header: HeaderJson,
  lineage: HistoryLineage,
  messages: unknown[] | TabledBody,
  operations: OperationLog | undefined,
  fresh = false,
): Promise<void> {
  const sp = ctx.sessionPaths(id);
  const rev = header.revision;
  const tabled = Array.isArray(messages) ? encodeMessagesBody(messages) : messages;
  const count = tabled.count;
  const meta: SnapshotMeta = {
    v: FORMAT_VERSION,
    kind: 'snapshot',
    header,
    messageCount: count,
    lineage,
  };
  const ops = storedOperations(operations);
  if (ops) meta.ops = ops;
  const frame = encodeSnapshotFile(meta, tabled);
  // A fresh folder (a create) has no older files to mark or remove.
  if (!fresh) markSuperseded(sp, rev);
  await ctx.writeAtomic(sp.snapshot(rev), frame);
  const old = ctx.tips.get(id);
  if (old) ctx.keptFiles.drop(sp.log(old.snapRev));
  const snapIno = Number(statSync(sp.snapshot(rev)).ino);
  ctx.setWriterTip(id, {
    header,
    lineage,
    messageCount: count,
    snapRev: rev,
    tabled: true,
    snapIno,
    snapBytes: frame.length,
    logIno: 0,
    logSize: 0,
    logFileSize: 0,
    logRecords: 0,
    verified: true,
  });
  // What the snapshot holds is the session's operation log from now on.
  ctx.operations.set(id, {
    snapRev: rev,
    snapIno,
    createdAt: header.createdAt,
    logIno: 0,
    logSize: 0,
    log: operations ?? new OperationLog(),
  });
  if (!fresh) await removeOlder(sp, rev);
}

/** `log` as a snapshot's meta stores it, oldest first; `undefined` when empty. */
function storedOperations(log: OperationLog | undefined): StoredOperation[] | undefined {
  if (log === undefined || log.size === 0) return undefined;
  return log
    .entries()
    .map(([opId, r]) => [opId, r.revision, r.messageCount, r.updatedAt.getTime()]);
}

/**
 * Clears the owner-write bit (snapshots are never written after creation, so it is
 * otherwise always set) of every snapshot older than `rev`, BEFORE the new snapshot is
 * renamed into place: a writer in another process that cached the old snapshot's tip
 * sees the mark in its `stat` and re-lists the folder (`cachedWriterTip`), even when this
 * writer dies before removing the old files. A mark left by such a crash on the still
 * newest snapshot only turns that check off for the session until its next snapshot;
 * readers need no write permission. Not on Windows, where a read-only file cannot be
 * unlinked (the cached-tip check is off there).
 */
function markSuperseded(sp: SessionPaths, rev: number): void {
  if (process.platform === 'win32') return;
  const names = listSessionFolder(sp.dir);
  if (!names) return;
  for (const r of scanSessionDir(names).snapshots) {
    if (r >= rev) continue;
    try {
      chmodSync(sp.snapshot(r), 0o400);
    } catch (e) {
      if (!isEnoent(e)) throw e;
    }
  }
}

/** Removes the snapshots and logs older than `rev` (and a format-1 `session.json`). */
async function removeOlder(sp: SessionPaths, rev: number): Promise<void> {
  const names = listSessionFolder(sp.dir);
  if (!names) return;
  const scan = scanSessionDir(names);
  for (const r of scan.snapshots) if (r < rev) await fsp.rm(sp.snapshot(r), { force: true });
  for (const r of scan.logs) if (r < rev) await fsp.rm(sp.log(r), { force: true });
  if (scan.legacy) await fsp.rm(sp.legacy, { force: true });
}

/** What `readSnapshotMeta` reads of a snapshot. */
export interface SnapshotInfo {
  meta: SnapshotMeta;
  /** The snapshot file's size. */
  bytes: number;
  /** An offset table (format 3: a second frame) follows the snapshot frame. */
  tabled: boolean;
}

/** `readSnapshotMeta`, or `undefined` when the snapshot is gone (a fold replaced it). */
export async function readSnapshotMetaIfPresent(
  id: string,
  path: string,
): Promise<SnapshotInfo | undefined> {
  try {
    return await readSnapshotMeta(id, path);
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
}

/**
 * A snapshot's meta (its first frame's), its file size and whether an offset table
 * (format 3: a second frame) follows. Reads the prefix and meta only.
 */
export async function readSnapshotMeta(id: string, path: string): Promise<SnapshotInfo> {
  const handle = openFd(path, 'r');
  try {
    const st = await handle.stat();
    const prefixBuf = Buffer.alloc(PREFIX_BYTES);
    const { bytesRead } = await handle.read(prefixBuf, 0, PREFIX_BYTES, 0);
    const prefix = bytesRead === PREFIX_BYTES ? decodePrefix(prefixBuf) : undefined;
    // Format 3 appends the offset table as a second frame (checked by full loads).
    if (
      !prefix ||
      prefix.total > st.size ||
      (prefix.total < st.size && st.size - prefix.total < PREFIX_BYTES + TAIL_BYTES)
    ) {
      throw errors.corrupt(id, `snapshot ${path} is truncated or damaged`);
    }
    const meta = await readFrameMeta<SnapshotMeta>(handle, prefix, 0);
    if (meta?.kind !== 'snapshot') {
      throw errors.corrupt(id, `snapshot ${path} has a damaged header`);
    }
    const problem = headerProblem(meta.header, id);
    if (problem) throw errors.corrupt(id, `snapshot ${path}: ${problem}`);
    return { meta, bytes: st.size, tabled: prefix.total < st.size };
  } finally {
    await handle.close();
  }
}
