// Reading a whole session: the newest snapshot and its log (or a format-1 `session.json`),
// every checksum verified, without a lock.

import { promises as fsp, readFileSync } from 'node:fs';
import type { HistoryLineage } from '@sessionkit/core/adapter';
import { readLineage } from '@sessionkit/core/adapter';
import { type Frame, frameBody, parseFrames } from '../format/frame.js';
import { migrateLegacy } from '../format/legacy-v1.js';
import {
  type HeaderJson,
  headerProblem,
  headerShapeProblem,
  type LogMeta,
  type SnapshotMeta,
} from '../format/records.js';
import { isEnoent, pathExists } from '../io/fs-helpers.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { newestSnapshot, READ_ATTEMPTS } from './folder.js';

/** The full stored state of a session. */
export interface LoadedSession {
  header: HeaderJson;
  lineage: HistoryLineage;
  messages: unknown[];
}

/**
 * The whole session: newest snapshot plus its log, every checksum verified. Retries
 * when a concurrent writer replaces the snapshot under it. Never takes a lock.
 */
export async function readFullSession(ctx: StoreContext, id: string): Promise<LoadedSession> {
  const sp = ctx.sessionPaths(id);
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    const snapRev = newestSnapshot(id, sp.dir);
    if (snapRev === undefined) {
      const legacy = await readLegacySession(ctx, id);
      if (legacy) return legacy;
      continue;
    }
    // Synchronous reads: from the page cache they take less time than parsing the JSON
    // they hold, which runs on this thread anyway, while each of a thread-pool read's
    // several round trips (open, stat, read, close) waits for the event loop to be
    // scheduled again, which on a busy machine costs more than the whole read.
    let snapBuf: Buffer;
    try {
      snapBuf = readFileSync(sp.snapshot(snapRev));
    } catch (e) {
      if (isEnoent(e)) continue;
      throw e;
    }
    let logBuf: Buffer | undefined;
    try {
      logBuf = readFileSync(sp.log(snapRev));
    } catch (e) {
      if (!isEnoent(e)) throw e;
      if (!(await pathExists(sp.snapshot(snapRev)))) continue;
    }
    ctx.stats.transcriptReads++;
    ctx.stats.transcriptBytesRead += snapBuf.length + (logBuf?.length ?? 0);
    return decodeSession(id, snapRev, snapBuf, logBuf);
  }
  throw errors.unavailable(`session "${id}" kept changing while being read`);
}

/** A format-1 session (`session.json`), or `undefined` when the file is gone. */
export async function readLegacySession(
  ctx: StoreContext,
  id: string,
): Promise<LoadedSession | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(ctx.sessionPaths(id).legacy, 'utf8');
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
  ctx.stats.transcriptReads++;
  try {
    return { ...migrateLegacy(JSON.parse(text), id), lineage: readLineage(undefined) };
  } catch (cause) {
    throw errors.corrupt(
      id,
      `session.json (format 1): ${cause instanceof Error ? cause.message : String(cause)}`,
      cause,
    );
  }
}

/** Decodes a snapshot and its log into the session they describe; `corrupt` on damage. */
function decodeSession(
  id: string,
  snapRev: number,
  snapBuf: Buffer,
  logBuf: Buffer | undefined,
): LoadedSession {
  const { meta, messages } = decodeSnapshot(id, snapRev, snapBuf);
  const state = { header: meta.header, lineage: meta.lineage, messages };
  if (logBuf && logBuf.length > 0) applyLog(id, snapRev, logBuf, state);
  return { header: state.header, lineage: readLineage(state.lineage), messages };
}

/** The snapshot's meta and messages; `corrupt` on damage. */
function decodeSnapshot(
  id: string,
  snapRev: number,
  snapBuf: Buffer,
): { meta: SnapshotMeta; messages: unknown[] } {
  // The frames' metas only: the body checksums are checked here, the JSON parsed once.
  const snap = parseFrames<SnapshotMeta>(snapBuf);
  const frame = snap.frames[0];
  // Format 3: a second frame, the offset table (its checksum checked by parseFrames).
  const table = snap.frames[1] as Frame<unknown> | undefined;
  const tableOk =
    table === undefined ||
    (snap.frames.length === 2 && (table.meta as { kind?: unknown }).kind === 'offsets');
  if (!frame || !tableOk || snap.torn || snap.corrupt) {
    throw errors.corrupt(
      id,
      `snapshot snap-${snapRev}.skr is ${snap.torn || !frame ? 'truncated' : 'damaged'}${snap.corrupt ? ` (${snap.corrupt})` : ''}`,
    );
  }
  const meta = frame.meta;
  if (meta.kind !== 'snapshot') throw errors.corrupt(id, `snap-${snapRev}.skr is not a snapshot`);
  const problem = headerProblem(meta.header, id);
  if (problem) throw errors.corrupt(id, `snap-${snapRev}.skr: ${problem}`);
  let messages: unknown[];
  try {
    messages = frameBody(snapBuf, frame) as unknown[];
  } catch (cause) {
    throw errors.corrupt(id, `snap-${snapRev}.skr: messages are not valid JSON`, cause);
  }
  if (!Array.isArray(messages) || messages.length !== meta.messageCount) {
    throw errors.corrupt(id, `snap-${snapRev}.skr: message count does not match`);
  }
  return { meta, messages };
}

/**
 * Applies every record of the log to `state` (its messages grow in place, header and
 * lineage become the last record's); `corrupt` on damage or records that do not add up.
 */
function applyLog(
  id: string,
  snapRev: number,
  logBuf: Buffer,
  state: { header: HeaderJson; lineage: HistoryLineage | undefined; messages: unknown[] },
): void {
  const log = parseFrames<LogMeta>(logBuf);
  if (log.corrupt) throw errors.corrupt(id, `log-${snapRev}.skr: ${log.corrupt}`);
  const { messages } = state;
  let seq = 0;
  for (const f of log.frames) {
    const m = f.meta;
    seq++;
    if (m.seq !== seq)
      throw errors.corrupt(id, `log-${snapRev}.skr: record ${seq} is out of order`);
    // Every record's shape; the strict check is for the last one, the header returned.
    const last = seq === log.frames.length;
    const problem = last ? headerProblem(m.header, id) : headerShapeProblem(m.header, id);
    if (problem) throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: ${problem}`);
    if (m.header.revision < state.header.revision) {
      throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: revision went backwards`);
    }
    if (m.truncate !== undefined) {
      if (!Number.isSafeInteger(m.truncate) || m.truncate < 0 || m.truncate > messages.length)
        throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: bad truncate`);
      messages.length = m.truncate;
    }
    if (m.appended > 0) {
      let added: unknown;
      try {
        added = frameBody(logBuf, f);
      } catch (cause) {
        throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: bad JSON`, cause);
      }
      if (!Array.isArray(added) || added.length !== m.appended) {
        throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: wrong message count`);
      }
      for (const msg of added) messages.push(msg);
    }
    if (messages.length !== m.messageCount) {
      throw errors.corrupt(id, `log-${snapRev}.skr record ${seq}: message count does not add up`);
    }
    state.header = m.header;
    state.lineage = m.lineage;
  }
}
