// Windowed history reads: the messages at positions [start, end) of one consistent state
// of a session, reading the commit log from its end and only the needed byte range of the
// snapshot (through its offset table). Cost grows with the window, not the history.

import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { type NormalizedMessageWindow, windowBounds } from '@sessionkit/core/adapter';
import { crc32 } from '../format/crc32.js';
import {
  decodePrefix,
  type FramePrefix,
  PREFIX_BYTES,
  TAIL_BYTES,
  TAIL_MAGIC,
} from '../format/frame.js';
import { ENTRY_BYTES, tableEntry } from '../format/message-offsets.js';
import { type SessionPaths, scanSessionDir } from '../format/paths.js';
import {
  type HeaderJson,
  headerProblem,
  type LogMeta,
  type OffsetsMeta,
  type SnapshotMeta,
} from '../format/records.js';
import { isEnoent } from '../io/fs-helpers.js';

/** A window as the store returns it (messages still owned by the reader: fresh objects). */
export interface WindowRead {
  messages: unknown[];
  offset: number;
  messageCount: number;
  header: HeaderJson;
}

/**
 * What one attempt found: the window; `retry` (a writer replaced the snapshot under the
 * read); `fallback` (anything this fast path does not handle or doubts: a format-1 or
 * format-2 snapshot, a damaged or missing file, a torn log end — the caller then reads
 * the whole session, which reports real damage as `corrupt`); `missing` (no folder).
 */
export type WindowAttempt = WindowRead | 'retry' | 'fallback' | 'missing';

/** Counts bytes read by window reads (`FileStore.stats.transcriptBytesRead`). */
export interface ReadCounter {
  transcriptBytesRead: number;
}

const LOG_CHUNK = 64 * 1024;

/** Reads `length` bytes at `position` (short only at the end of the file). */
function pread(fd: number, length: number, position: number, counter: ReadCounter): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  counter.transcriptBytesRead += done;
  return done === length ? buf : buf.subarray(0, done);
}

function openOrUndefined(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
}

function parseJson<T>(buf: Buffer): T | undefined {
  try {
    return JSON.parse(buf.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** A frame's prefix and meta read at `offset` (meta CRC checked), or undefined. */
function readPrefixAndMeta<T>(
  fd: number,
  offset: number,
  fileSize: number,
  counter: ReadCounter,
): { prefix: FramePrefix; meta: T } | undefined {
  if (offset + PREFIX_BYTES > fileSize) return undefined;
  const prefix = decodePrefix(pread(fd, PREFIX_BYTES, offset, counter));
  if (!prefix || offset + prefix.total > fileSize) return undefined;
  const metaBuf = pread(fd, prefix.metaLen, offset + PREFIX_BYTES, counter);
  if (metaBuf.length !== prefix.metaLen || crc32(metaBuf) !== prefix.metaCrc) return undefined;
  const meta = parseJson<T>(metaBuf);
  return meta === undefined ? undefined : { prefix, meta };
}

/** One log record found from the end: its meta and its whole frame's bytes. */
interface TailRecord {
  meta: LogMeta;
  start: number;
  frame: Buffer;
  prefix: FramePrefix;
}

/** Reads a log backwards in chunks, so the last records cost one or two `pread`s. */
class BackwardLog {
  #buf = Buffer.alloc(0);
  #bufStart: number;
  constructor(
    private readonly fd: number,
    size: number,
    private readonly counter: ReadCounter,
  ) {
    this.#bufStart = size;
  }

  /** The bytes `[from, to)` (`to` at most the size given). */
  bytes(from: number, to: number): Buffer {
    if (from < this.#bufStart) {
      const start = Math.max(0, Math.min(from, this.#bufStart - LOG_CHUNK));
      const more = pread(this.fd, this.#bufStart - start, start, this.counter);
      if (more.length !== this.#bufStart - start) throw new Error('log shrank under the read');
      this.#buf = Buffer.concat([more, this.#buf]);
      this.#bufStart = start;
    }
    return this.#buf.subarray(from - this.#bufStart, to - this.#bufStart);
  }

  /** The record that ends at `end`, checked (prefix, meta, body CRCs, trailer), or undefined. */
  recordBefore(end: number): TailRecord | undefined {
    if (end < PREFIX_BYTES + TAIL_BYTES) return undefined;
    const tail = this.bytes(end - TAIL_BYTES, end);
    const total = tail.readUInt32LE(0);
    if (tail.readUInt32LE(4) !== TAIL_MAGIC || total > end || total < PREFIX_BYTES + TAIL_BYTES)
      return undefined;
    const start = end - total;
    const frame = this.bytes(start, end);
    const prefix = decodePrefix(frame.subarray(0, PREFIX_BYTES));
    if (!prefix || prefix.total !== total) return undefined;
    const metaBuf = frame.subarray(PREFIX_BYTES, PREFIX_BYTES + prefix.metaLen);
    const body = frame.subarray(
      PREFIX_BYTES + prefix.metaLen,
      PREFIX_BYTES + prefix.metaLen + prefix.bodyLen,
    );
    if (crc32(metaBuf) !== prefix.metaCrc || crc32(body) !== prefix.bodyCrc) return undefined;
    const meta = parseJson<LogMeta>(metaBuf);
    if (!meta || typeof meta.seq !== 'number') return undefined;
    return { meta, start, frame, prefix };
  }
}

/** The appended messages of a record (parsed from its checked body), or undefined. */
function recordMessages(r: TailRecord): unknown[] | undefined {
  if (r.meta.appended === 0) return [];
  const body = r.frame.subarray(
    PREFIX_BYTES + r.prefix.metaLen,
    PREFIX_BYTES + r.prefix.metaLen + r.prefix.bodyLen,
  );
  const parsed = parseJson<unknown>(body);
  return Array.isArray(parsed) && parsed.length === r.meta.appended ? parsed : undefined;
}

/** What the log's tail gives a window: its records and which of their messages it takes. */
interface WindowTail {
  /** The records read, newest first, and the positions `[s, e)` each one supplies. */
  records: TailRecord[];
  ranges: { s: number; e: number }[];
  /** The window's bounds in the history after the newest record. */
  start: number;
  end: number;
  /** The snapshot supplies positions `[start, snapEnd)` (none when `snapEnd <= start`). */
  snapEnd: number;
  messageCount: number;
}

/**
 * The log records, newest first, back to the last one the window needs (or to the first
 * record), checked to chain up: sequence numbers, and each record's base — the count it
 * starts from, `messageCount − appended` — equal to the count before it, or at most that
 * count for a record that truncated (it keeps a prefix of the history before it, so every
 * position under its base is the older state's). Record `r` supplies the window's
 * positions from its base up to the smallest base of the records after it; positions under
 * every base read come from the snapshot. `undefined` when the end is torn, anything does
 * not add up, or the log is empty (the caller then reads the snapshot alone).
 */
function tailRecords(
  log: BackwardLog,
  size: number,
  snapCount: number,
  boundsOf: (messageCount: number) => { start: number; end: number },
): WindowTail | undefined {
  const records: TailRecord[] = [];
  const ranges: { s: number; e: number }[] = [];
  let at = size;
  let bounds = { start: 0, end: 0 };
  let need = 0;
  while (at > 0) {
    const r = log.recordBefore(at);
    if (!r) return undefined;
    const base = r.meta.messageCount - r.meta.appended;
    if (base < 0 || (r.meta.truncate !== undefined && r.meta.truncate !== base)) return undefined;
    const newer = records[records.length - 1];
    if (newer) {
      if (r.meta.seq !== newer.meta.seq - 1) return undefined;
      if (!chains(r.meta.messageCount, newer.meta)) return undefined;
    } else {
      bounds = boundsOf(r.meta.messageCount);
      need = bounds.end;
    }
    records.push(r);
    ranges.push({ s: Math.max(bounds.start, base), e: Math.min(need, r.meta.messageCount) });
    need = Math.min(need, base);
    at = r.start;
    if (need <= bounds.start) break; // nothing older is needed
    if (r.meta.seq === 1) {
      if (at !== 0 || !chains(snapCount, r.meta)) return undefined;
      break;
    }
  }
  const newest = records[0];
  const oldest = records[records.length - 1];
  if (!newest || !oldest || (need > bounds.start && oldest.meta.seq !== 1)) return undefined;
  const { start, end } = bounds;
  return { records, ranges, start, end, snapEnd: need, messageCount: newest.meta.messageCount };
}

/** Whether a record `meta` can follow a state of `count` messages. */
function chains(count: number, meta: LogMeta): boolean {
  const base = meta.messageCount - meta.appended;
  return meta.truncate === undefined ? count === base : count >= base;
}

/** Messages `[s, e)` of a format-3 snapshot through its offset table, or undefined. */
function snapshotRange(
  fd: number,
  snapSize: number,
  first: FramePrefix,
  count: number,
  s: number,
  e: number,
  counter: ReadCounter,
): unknown[] | undefined {
  if (e <= s) return [];
  const offsets = readPrefixAndMeta<OffsetsMeta>(fd, first.total, snapSize, counter);
  if (offsets?.meta.kind !== 'offsets' || offsets.meta.count !== count) return undefined;
  if (offsets.prefix.bodyLen !== (count + 1) * ENTRY_BYTES) return undefined;
  const tableStart = first.total + PREFIX_BYTES + offsets.prefix.metaLen;
  const slice = pread(fd, (e - s + 1) * ENTRY_BYTES, tableStart + s * ENTRY_BYTES, counter);
  if (slice.length !== (e - s + 1) * ENTRY_BYTES) return undefined;
  const from = tableEntry(slice, s, s).offset;
  const to = tableEntry(slice, s, e).offset - 1;
  if (from < 1 || to <= from || to >= first.bodyLen) return undefined;
  const bodyStart = PREFIX_BYTES + first.metaLen;
  const bytes = pread(fd, to - from, bodyStart + from, counter);
  if (bytes.length !== to - from) return undefined;
  for (let i = s; i < e; i++) {
    const { offset, crc } = tableEntry(slice, s, i);
    const next = tableEntry(slice, s, i + 1).offset;
    if (offset < from || next - 1 > to || next <= offset) return undefined;
    if (crc32(bytes.subarray(offset - from, next - 1 - from)) !== crc) return undefined;
  }
  const parsed = parseJson<unknown>(Buffer.concat([Buffer.from('['), bytes, Buffer.from(']')]));
  return Array.isArray(parsed) && parsed.length === e - s ? parsed : undefined;
}

/**
 * One attempt at reading `window` of the session whose folder is `sp.dir`: the newest
 * snapshot and its log are opened once, the log's size taken once, and everything is
 * read from those descriptors, so the result is the state after some commit — never a
 * mix of two. Never takes a lock.
 */
export function readWindowOnce(
  id: string,
  sp: SessionPaths,
  window: NormalizedMessageWindow,
  counter: ReadCounter,
): WindowAttempt {
  let names: string[];
  try {
    names = readdirSync(sp.dir);
  } catch (e) {
    if (isEnoent(e)) return 'missing';
    throw e;
  }
  const scan = scanSessionDir(names);
  const snapRev = scan.snapshots[scan.snapshots.length - 1];
  if (snapRev === undefined) return 'fallback';
  const snapFd = openOrUndefined(sp.snapshot(snapRev));
  if (snapFd === undefined) return 'retry';
  let logFd: number | undefined;
  try {
    logFd = openOrUndefined(sp.log(snapRev));
    // No log: the snapshot alone is the state, unless it was superseded meanwhile (older
    // snapshots are unlinked before their logs).
    if (logFd === undefined && fstatSync(snapFd).nlink === 0) return 'retry';
    return readOpened(id, snapFd, logFd, window, counter);
  } finally {
    closeSync(snapFd);
    if (logFd !== undefined) closeSync(logFd);
  }
}

function readOpened(
  id: string,
  snapFd: number,
  logFd: number | undefined,
  window: NormalizedMessageWindow,
  counter: ReadCounter,
): WindowAttempt {
  const snapSize = fstatSync(snapFd).size;
  const snap = readPrefixAndMeta<SnapshotMeta>(snapFd, 0, snapSize, counter);
  if (snap?.meta.kind !== 'snapshot' || headerProblem(snap.meta.header, id)) return 'fallback';
  const tabled = snapSize > snap.prefix.total;
  const snapCount = snap.meta.messageCount;
  const logSize = logFd === undefined ? 0 : fstatSync(logFd).size;
  let tail: WindowTail | undefined;
  try {
    if (logFd === undefined || logSize === 0) {
      const { start, end } = windowBounds(window, snapCount);
      tail = { records: [], ranges: [], start, end, snapEnd: end, messageCount: snapCount };
    } else {
      const log = new BackwardLog(logFd, logSize, counter);
      tail = tailRecords(log, logSize, snapCount, (n) => windowBounds(window, n));
    }
  } catch {
    return 'fallback'; // the log changed under the read in a way appends cannot (a truncation)
  }
  if (!tail) return 'fallback';
  const { start, snapEnd } = tail;
  const out: unknown[] = [];
  if (start < snapEnd) {
    if (!tabled) return 'fallback';
    const part = snapshotRange(snapFd, snapSize, snap.prefix, snapCount, start, snapEnd, counter);
    if (!part) return 'fallback';
    for (const m of part) out.push(m);
  }
  // Oldest record first: each one's range ends where the next one's begins.
  for (let i = tail.records.length - 1; i >= 0; i--) {
    const r = tail.records[i]!;
    const { s, e } = tail.ranges[i]!;
    if (e <= s) continue;
    const added = recordMessages(r);
    if (!added) return 'fallback';
    const base = r.meta.messageCount - r.meta.appended;
    for (let k = s; k < e; k++) out.push(added[k - base]);
  }
  const header = tail.records[0]?.meta.header ?? snap.meta.header;
  if (headerProblem(header, id)) return 'fallback';
  return { messages: out, offset: start, messageCount: tail.messageCount, header };
}
