// Replaying abandoned commit journals (`journal/*.skj`, see `io/commit-journal.ts`) when a
// store opens: after a machine crash, a session log may have lost records that were
// acknowledged because the journal holding them was fsync'd. Each record is written
// back at the offset it had, under the session's lock; records already in place are
// left alone, so a replay after a mere process crash (the logs intact) changes nothing.

import {
  constants,
  fdatasync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { isValidId } from '@sessionkit/core';
import { fsyncDir, isLockHolderGone } from '@sessionkit/core/adapter';
import { parseFrames } from '../format/frame.js';
import { closeQuietly } from '../io/fs-helpers.js';
import {
  currentBootId,
  HEADER_BYTES,
  type JournalOwnerMeta,
  type JournalRecordMeta,
} from '../io/journal-file.js';
import type { StoreContext } from '../store/context.js';
import { newestSnapshot } from './folder.js';
import { withSessionLock } from './lock.js';

/** A journal record to write back: its log frame and where it goes. */
interface Replayed {
  snapRev: number;
  offset: number;
  frame: Buffer;
}

/**
 * Replays every journal of the store whose writer is certainly gone (another boot, or a
 * process of this host that no longer runs), then removes it. Journals of live (or
 * unjudgeable) writers are left to them. The files of one writer (a store keeps up to
 * two) are replayed together, each session's records in log order, so a log is written
 * back front to back, never with a gap a concurrent reader would take for damage.
 */
export async function replayAbandonedJournals(ctx: StoreContext): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(ctx.paths.journal);
  } catch {
    return;
  }
  const byWriter = new Map<string, { paths: string[]; records: Map<string, Replayed[]> }>();
  for (const name of names) {
    if (!name.endsWith('.skj')) continue;
    const path = join(ctx.paths.journal, name);
    let buf: Buffer;
    try {
      buf = readFileSync(path);
    } catch {
      continue; // removed by its owner or another replayer meanwhile
    }
    const head = parseFrames<JournalOwnerMeta>(buf.subarray(0, HEADER_BYTES)).frames[0]?.meta;
    if (head?.kind !== 'journal' || !abandoned(head)) continue;
    const { pid, hostname, pidNamespace } = head.owner;
    const writer = `${hostname}\n${pidNamespace ?? ''}\n${pid}\n${head.bootId ?? ''}`;
    const group = byWriter.get(writer) ?? { paths: [] as string[], records: new Map() };
    byWriter.set(writer, group);
    group.paths.push(path);
    for (const [id, records] of journalRecords(buf, head))
      group.records.set(id, [...(group.records.get(id) ?? []), ...records]);
  }
  for (const { paths, records: bySession } of byWriter.values()) {
    for (const [id, records] of bySession) {
      records.sort((a, b) => a.snapRev - b.snapRev || a.offset - b.offset);
      await withSessionLock(ctx, id, () => replaySession(ctx, id, records));
    }
    for (const path of paths) {
      try {
        unlinkSync(path);
      } catch {
        // removed by another replayer
      }
    }
  }
}

/**
 * The records of a journal by session, in the order written. A format-5 journal (its
 * header names a generation) is written in place: its records start after the padded
 * header and end at the first frame that is damaged, torn, zero or of another generation
 * (left from before the last checkpoint). A format-4 journal was appended to and cut back
 * to its header at checkpoints: every frame after the header is a record.
 */
export function journalRecords(buf: Buffer, head: JournalOwnerMeta): Map<string, Replayed[]> {
  const inPlace = head.gen !== undefined;
  const frames = inPlace
    ? parseFrames<JournalRecordMeta>(buf, HEADER_BYTES).frames
    : parseFrames<JournalRecordMeta>(buf).frames.slice(1);
  const bySession = new Map<string, Replayed[]>();
  for (const f of frames) {
    const m = f.meta;
    if (inPlace && (m.kind !== 'record' || m.gen !== head.gen)) break;
    if (m.kind !== 'record' || !isValidId(m.id)) continue;
    const list = bySession.get(m.id) ?? [];
    list.push({
      snapRev: m.snapRev,
      offset: m.offset,
      frame: buf.subarray(f.bodyStart, f.bodyEnd),
    });
    bySession.set(m.id, list);
  }
  return bySession;
}

/** Whether the journal's writer is certainly gone. */
function abandoned(head: JournalOwnerMeta): boolean {
  const boot = currentBootId();
  if (head.bootId !== undefined && boot !== undefined && head.bootId !== boot) return true;
  return isLockHolderGone(JSON.stringify(head.owner));
}

/**
 * Writes back the records of one session that its current log lacks. Records of a log
 * that is no longer the newest (folded into a snapshot, replaced, deleted) are skipped:
 * the snapshot that superseded it was fsync'd and holds them.
 */
async function replaySession(ctx: StoreContext, id: string, records: Replayed[]): Promise<void> {
  const sp = ctx.sessionPaths(id);
  let current: number | undefined;
  try {
    current = newestSnapshot(id, sp.dir);
  } catch {
    return; // deleted, or damaged: repair() reports it
  }
  const mine = records.filter((r) => r.snapRev === current);
  if (mine.length === 0) return;
  let fd: number;
  try {
    // The log of the current snapshot, created when a crash lost the new file itself
    // (its folder is not fsync'd when a log is created: the journal holds its records).
    fd = openSync(sp.log(mine[0]!.snapRev), constants.O_RDWR | constants.O_CREAT, 0o600);
  } catch {
    return; // the session folder went away meanwhile
  }
  try {
    let wrote = false;
    for (const r of mine) {
      const there = Buffer.alloc(r.frame.length);
      const n = readAt(fd, there, r.offset);
      if (n === r.frame.length && there.equals(r.frame)) continue;
      writeAt(fd, r.frame, r.offset);
      wrote = true;
    }
    if (wrote) {
      ctx.forgetTip(id);
      await new Promise<void>((resolve, reject) =>
        fdatasync(fd, (e) => (e ? reject(e) : resolve())),
      );
      await fsyncDir(sp.dir);
    }
  } finally {
    closeQuietly(fd);
  }
}

function readAt(fd: number, buf: Buffer, position: number): number {
  let done = 0;
  while (done < buf.length) {
    const n = readSyncAt(fd, buf, done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

function readSyncAt(fd: number, buf: Buffer, offset: number, position: number): number {
  return readSync(fd, buf, offset, buf.length - offset, position);
}

function writeAt(fd: number, data: Buffer, position: number): void {
  let done = 0;
  while (done < data.length) done += writeSync(fd, data, done, data.length - done, position + done);
}
