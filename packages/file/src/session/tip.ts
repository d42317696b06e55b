// A session's tip: its header, lineage and message count after its last record, and where
// that record is (snapshot and log identity, log size), read from metas only. Writers
// append after it; readers list from it.

import { statSync } from 'node:fs';
import { readLineage } from '@sessionkit/core/adapter';
import type { SessionPaths } from '../format/paths.js';
import { isEnoent } from '../io/fs-helpers.js';
import { type Fd, openFd } from '../io/sync-fd.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { readLastRecord } from './commit-log.js';
import { newestSnapshot, READ_ATTEMPTS } from './folder.js';
import { type LoadedSession, readLegacySession } from './full-read.js';
import type { SessionTip, TipCaller } from './session-tip.js';
import { readSnapshotMetaIfPresent, type SnapshotInfo, writeSnapshot } from './snapshot.js';

export type { SessionTip, TipCaller } from './session-tip.js';

/**
 * The tip of a session, reading only the snapshot's meta and the last log record (cached
 * by the log's inode and size). Throws `not_found`, `corrupt`, or `unavailable` when the
 * session keeps changing under a reader.
 */
export async function readSessionTip(
  ctx: StoreContext,
  id: string,
  caller: TipCaller,
): Promise<SessionTip> {
  const sp = ctx.sessionPaths(id);
  if (caller === 'writer') {
    const cached = leasedWriterTip(ctx, id, sp) ?? cachedWriterTip(ctx, id, sp);
    if (cached) return cached;
  }
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    const snapRev = newestSnapshot(id, sp.dir);
    if (snapRev === undefined) {
      const legacy = await readLegacySession(ctx, id);
      if (!legacy) continue;
      if (caller === 'reader') return legacyTip(legacy);
      // A writer migrates a format-1 session to a snapshot, then reads that.
      await writeSnapshot(ctx, id, legacy.header, legacy.lineage, legacy.messages, undefined);
      continue;
    }
    const tip = await readTipAt(ctx, id, sp, snapRev, caller);
    if (tip) return tip;
  }
  throw errors.unavailable(`session "${id}" kept changing while being read`);
}

/** The tip of a format-1 session (no snapshot, no log). */
function legacyTip(legacy: LoadedSession): SessionTip {
  return {
    header: legacy.header,
    lineage: legacy.lineage,
    messageCount: legacy.messages.length,
    snapRev: 0,
    tabled: false,
    snapIno: 0,
    snapBytes: 0,
    logIno: 0,
    logSize: 0,
    logFileSize: 0,
    logRecords: 0,
    verified: false,
  };
}

/** A tip with no log records yet, from a snapshot's meta. */
function snapshotTip(snapRev: number, snapIno: number, snap: SnapshotInfo): SessionTip {
  return {
    header: snap.meta.header,
    lineage: readLineage(snap.meta.lineage),
    messageCount: snap.meta.messageCount,
    snapRev,
    tabled: snap.tabled,
    snapIno,
    snapBytes: snap.bytes,
    logIno: 0,
    logSize: 0,
    logFileSize: 0,
    logRecords: 0,
    verified: true,
  };
}

/**
 * The tip of snapshot `snapRev` and its log, or `undefined` when a writer replaced the
 * snapshot meanwhile (the caller lists the folder again). When the snapshot's and the
 * log's identities match what this store last saw, the cached tip is current and nothing
 * else is read.
 */
async function readTipAt(
  ctx: StoreContext,
  id: string,
  sp: SessionPaths,
  snapRev: number,
  caller: TipCaller,
): Promise<SessionTip | undefined> {
  let snapIno: number;
  try {
    snapIno = Number(statSync(sp.snapshot(snapRev)).ino);
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
  const cached = ctx.tips.get(id);
  let handle: Fd | undefined;
  try {
    handle = openFd(sp.log(snapRev), 'r');
  } catch (e) {
    if (!isEnoent(e)) throw e;
  }
  if (!handle) {
    // No shortcut from the cached tip here: only the snapshot's inode would vouch for it,
    // and a session deleted and re-created by another process may get that inode number
    // again. Its meta is small.
    const snap = await readSnapshotMetaIfPresent(id, sp.snapshot(snapRev));
    if (!snap) return undefined;
    const tip = snapshotTip(snapRev, snapIno, snap);
    if (caller === 'writer') ctx.setWriterTip(id, tip);
    else ctx.tips.set(id, tip);
    return tip;
  }
  try {
    const at = { sp, snapRev, snapIno, cached };
    return await readTipWithLog(ctx, id, at, handle, caller);
  } finally {
    await handle.close();
  }
}

/**
 * `readTipAt` for a session with a log, open as `handle`; `at.cached` is this store's tip
 * of the session when the snapshot was found.
 */
async function readTipWithLog(
  ctx: StoreContext,
  id: string,
  at: { sp: SessionPaths; snapRev: number; snapIno: number; cached: SessionTip | undefined },
  handle: Fd,
  caller: TipCaller,
): Promise<SessionTip | undefined> {
  const { sp, snapRev, snapIno, cached } = at;
  const st = await handle.stat();
  const ino = Number(st.ino);
  if (
    cached &&
    cached.snapRev === snapRev &&
    cached.snapIno === snapIno &&
    cached.logIno === ino &&
    cached.logFileSize === st.size &&
    (cached.verified || caller === 'reader') &&
    ctx.keptFiles.isPinned(sp.log(snapRev), ino)
  )
    return cached;
  const snap = await readSnapshotMetaIfPresent(id, sp.snapshot(snapRev));
  if (!snap) return undefined;
  const base: SessionTip = {
    ...snapshotTip(snapRev, snapIno, snap),
    logIno: ino,
    logFileSize: st.size,
    verified: caller === 'writer',
  };
  const verifyBody = caller === 'writer';
  const tip = (await readLastRecord(ctx, id, handle, st.size, base, verifyBody)) ?? base;
  if (caller === 'writer') ctx.setWriterTip(id, tip);
  else ctx.tips.set(id, tip);
  return tip;
}

/**
 * The tip this store's last write left, when the session's lock has been held without a
 * break since (a lease: no other process or store can have written the session) and one
 * `stat` shows the log still as that write left it (same inode and size; a log damaged
 * or truncated behind the store's back sends the writer to the full read).
 */
function leasedWriterTip(ctx: StoreContext, id: string, sp: SessionPaths): SessionTip | undefined {
  const tip = ctx.tips.get(id);
  const epoch = ctx.leases.epochOf(id);
  if (epoch === undefined || tip?.leaseEpoch !== epoch) return undefined;
  if (!tip.verified || tip.logFileSize !== tip.logSize || tip.snapRev === 0) return undefined;
  const log = statSync(sp.log(tip.snapRev), { throwIfNoEntry: false });
  if (tip.logIno === 0) return log ? undefined : tip;
  if (!log || Number(log.ino) !== tip.logIno || log.size !== tip.logSize) return undefined;
  return tip;
}

/**
 * The cached tip of a writer (the caller holds the session lock) when two `stat`s prove
 * it current, else `undefined` (the caller then lists the folder). Current means: the
 * cached log is still at its path with the same inode and exactly the size this store
 * left it (any append, truncation or replacement by another process changes one of
 * them; appends only grow it, and a log is never rewritten in place), and the cached
 * snapshot is still at its path, same inode, and not marked superseded. A newer snapshot
 * is only ever written by `writeSnapshot`, which first clears the owner-write bit of
 * every older snapshot (see there) and then removes older snapshots and logs: so if a
 * newer snapshot exists — even one whose writer crashed before that removal — the
 * cached snapshot is either gone or marked, and the full scan runs. Only used while a
 * log exists: a snapshot alone is checked by the full scan.
 */
function cachedWriterTip(ctx: StoreContext, id: string, sp: SessionPaths): SessionTip | undefined {
  const cached = ctx.tips.get(id);
  if (!cached?.verified || cached.logIno === 0 || cached.logFileSize !== cached.logSize)
    return undefined;
  if (process.platform === 'win32') return undefined;
  // Only while this store keeps the log open: an open file's inode number cannot be
  // given to a new file, so the same inode at the path is the very file this store wrote
  // (not a log of the session deleted and re-created meanwhile by another process).
  if (!ctx.keptFiles.isPinned(sp.log(cached.snapRev), cached.logIno)) return undefined;
  const log = statSync(sp.log(cached.snapRev), { throwIfNoEntry: false });
  if (!log || Number(log.ino) !== cached.logIno || log.size !== cached.logSize) return undefined;
  const snap = statSync(sp.snapshot(cached.snapRev), { throwIfNoEntry: false });
  // Exactly the mode snapshots are written with: a marked one lacks owner-write, and a
  // file system that does not keep modes (all files alike) never takes this path.
  if (!snap || Number(snap.ino) !== cached.snapIno || (snap.mode & 0o777) !== 0o600)
    return undefined;
  return cached;
}
