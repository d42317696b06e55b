// The on-disk shape of a file store, in one place: paths, the record frame, the format
// version and the JSON form of a session header.

import { join } from 'node:path';
import * as zlib from 'node:zlib';
import type { JsonValue, Session, SessionSummary } from '@sessionkit/core';
import type { HistoryLineage } from '@sessionkit/core/adapter';

/** What `format.json` says the folder is. */
export const FORMAT_NAME = 'sessionkit-file';
/**
 * The current on-disk format. Version 1 kept one `session.json` per session (whole
 * session, ISO dates, no log); version 2 is snapshot + framed commit log; version 3 adds
 * a message-offset table to snapshots (windowed reads), the merge lineage to snapshot and
 * log metas, per-message byte sizes to log records, and search text with one `"A"` before
 * each message's text (version 2 used `"\n"` between messages, which let a query span two
 * messages). Older folders are read and upgraded on open (index and search files rebuilt),
 * and each session's snapshot gets its offset table on its next write.
 */
export const FORMAT_VERSION = 3;

/** Paths of a store rooted at `root`. */
export function storePaths(root: string) {
  return {
    root,
    format: join(root, 'format.json'),
    sessions: join(root, 'sessions'),
    locks: join(root, 'locks'),
    trash: join(root, 'trash'),
    index: join(root, 'index.log'),
    // Store-wide locks start with "." so no session id (which cannot) can collide.
    indexLock: join(root, 'locks', '.index.lock'),
    router: join(root, 'router.json'),
    routerLock: join(root, 'locks', '.router.lock'),
    formatLock: join(root, 'locks', '.format.lock'),
  };
}
export type StorePaths = ReturnType<typeof storePaths>;

/** Paths of one session's folder. */
export function sessionPaths(paths: StorePaths, id: string) {
  const dir = join(paths.sessions, id);
  return {
    dir,
    lock: join(paths.locks, `${id}.lock`),
    snapshot: (rev: number) => join(dir, `snap-${rev}.skr`),
    log: (rev: number) => join(dir, `log-${rev}.skr`),
    events: join(dir, 'events.skr'),
    status: join(dir, 'status.json'),
    search: join(dir, 'search.txt'),
    /** Format 1: the whole session as one JSON file. */
    legacy: join(dir, 'session.json'),
  };
}
export type SessionPaths = ReturnType<typeof sessionPaths>;

const SNAP_RE = /^snap-(\d+)\.skr$/;
const LOG_RE = /^log-(\d+)\.skr$/;

/** The snapshot and log revisions named in a session folder listing. */
export function scanSessionDir(names: readonly string[]): {
  snapshots: number[];
  logs: number[];
  legacy: boolean;
} {
  const snapshots: number[] = [];
  const logs: number[] = [];
  let legacy = false;
  for (const name of names) {
    const s = SNAP_RE.exec(name);
    if (s) snapshots.push(Number(s[1]));
    const l = LOG_RE.exec(name);
    if (l) logs.push(Number(l[1]));
    if (name === 'session.json') legacy = true;
  }
  snapshots.sort((a, b) => a - b);
  logs.sort((a, b) => a - b);
  return { snapshots, logs, legacy };
}

// ---------------------------------------------------------------------------- CRC-32

let table: Uint32Array | undefined;
function crcTable(): Uint32Array {
  if (table) return table;
  table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

const nativeCrc = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/** CRC-32 (IEEE) of `data`: node:zlib's where present (Node ≥ 20.15), a table otherwise. */
export function crc32(data: Uint8Array): number {
  if (nativeCrc) return nativeCrc(data) >>> 0;
  const t = crcTable();
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// ---------------------------------------------------------------------------- frames
//
// Every record of a snapshot, commit log, event log and the index is one frame:
//
//   head (24 bytes):  magic "SKR2" | metaLen | bodyLen | crc(meta) | crc(body) | crc(head[0..20))
//   meta:             UTF-8 JSON (small: the header and counts)
//   body:             UTF-8 JSON or empty (messages, event payload)
//   tail (8 bytes):   total frame length | magic "SKRE"
//
// All integers u32 little-endian. The head lets a reader skip a body it does not need
// (listing never reads bodies); the tail lets a writer find the last record from the end
// of the file in O(1). A frame that runs past the end of the file is a torn append
// (never acknowledged) and is ignored; a damaged frame followed by more data is corruption.

export const FRAME_MAGIC = 0x32524b53; // "SKR2"
export const TAIL_MAGIC = 0x45524b53; // "SKRE"
export const HEAD_BYTES = 24;
export const TAIL_BYTES = 8;
const EMPTY = new Uint8Array(0);

/** One frame's bytes for `meta` (JSON) and `body` (already encoded, or none). */
export function encodeFrame(meta: unknown, body: Uint8Array = EMPTY): Buffer {
  const metaBytes = Buffer.from(JSON.stringify(meta), 'utf8');
  const total = HEAD_BYTES + metaBytes.length + body.length + TAIL_BYTES;
  const out = Buffer.allocUnsafe(total);
  out.writeUInt32LE(FRAME_MAGIC, 0);
  out.writeUInt32LE(metaBytes.length, 4);
  out.writeUInt32LE(body.length, 8);
  out.writeUInt32LE(crc32(metaBytes), 12);
  out.writeUInt32LE(crc32(body), 16);
  out.writeUInt32LE(crc32(out.subarray(0, 20)), 20);
  metaBytes.copy(out, HEAD_BYTES);
  out.set(body, HEAD_BYTES + metaBytes.length);
  out.writeUInt32LE(total, total - TAIL_BYTES);
  out.writeUInt32LE(TAIL_MAGIC, total - 4);
  return out;
}

/** A decoded frame head. */
export interface FrameHead {
  metaLen: number;
  bodyLen: number;
  metaCrc: number;
  bodyCrc: number;
  /** Whole frame length including head and tail. */
  total: number;
}

/** The head at `buf[0..24)`, or `undefined` when it is not a valid head. */
export function decodeHead(buf: Uint8Array): FrameHead | undefined {
  if (buf.length < HEAD_BYTES) return undefined;
  const view = Buffer.from(buf.buffer, buf.byteOffset, HEAD_BYTES);
  if (view.readUInt32LE(0) !== FRAME_MAGIC) return undefined;
  if (view.readUInt32LE(20) !== crc32(view.subarray(0, 20))) return undefined;
  const metaLen = view.readUInt32LE(4);
  const bodyLen = view.readUInt32LE(8);
  return {
    metaLen,
    bodyLen,
    metaCrc: view.readUInt32LE(12),
    bodyCrc: view.readUInt32LE(16),
    total: HEAD_BYTES + metaLen + bodyLen + TAIL_BYTES,
  };
}

/** One parsed frame: its meta, and where its body sits in the buffer. */
export interface Frame<T = unknown> {
  meta: T;
  /** Byte offsets of the frame in the buffer it was parsed from. */
  start: number;
  end: number;
  bodyStart: number;
  bodyEnd: number;
}

/** What `parseFrames` found. */
export interface ParsedFrames<T = unknown> {
  frames: Frame<T>[];
  /** Offset just after the last good frame. */
  validEnd: number;
  /** Set when bytes after `validEnd` are an incomplete final append (ignored). */
  torn: boolean;
  /** Set when a damaged frame is followed by more data: the file is corrupt. */
  corrupt?: string | undefined;
}

function allZero(buf: Uint8Array, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}

/**
 * Parses every frame of `buf` from `offset`. Checks head, meta and (when `checkBodies`)
 * body checksums. A final frame that is incomplete, or damaged and last in the file, or
 * trailing zero bytes (a file extended but never written, after a power loss), counts as
 * torn; anything damaged with more data after it is reported in `corrupt`.
 */
export function parseFrames<T = unknown>(
  buf: Uint8Array,
  offset = 0,
  checkBodies = true,
): ParsedFrames<T> {
  const frames: Frame<T>[] = [];
  let pos = offset;
  while (pos < buf.length) {
    const rest = buf.length - pos;
    if (rest < HEAD_BYTES) return { frames, validEnd: pos, torn: true };
    const head = decodeHead(buf.subarray(pos, pos + HEAD_BYTES));
    if (!head) {
      if (allZero(buf, pos)) return { frames, validEnd: pos, torn: true };
      return { frames, validEnd: pos, torn: false, corrupt: `bad record header at byte ${pos}` };
    }
    if (head.total > rest) return { frames, validEnd: pos, torn: true };
    const metaStart = pos + HEAD_BYTES;
    const bodyStart = metaStart + head.metaLen;
    const bodyEnd = bodyStart + head.bodyLen;
    const end = pos + head.total;
    const last = end === buf.length;
    const bad = (why: string): ParsedFrames<T> =>
      last
        ? { frames, validEnd: pos, torn: true }
        : { frames, validEnd: pos, torn: false, corrupt: `${why} in the record at byte ${pos}` };
    const metaBytes = buf.subarray(metaStart, bodyStart);
    if (crc32(metaBytes) !== head.metaCrc) return bad('meta checksum mismatch');
    if (checkBodies && crc32(buf.subarray(bodyStart, bodyEnd)) !== head.bodyCrc)
      return bad('body checksum mismatch');
    const tail = Buffer.from(buf.buffer, buf.byteOffset + bodyEnd, TAIL_BYTES);
    if (tail.readUInt32LE(0) !== head.total || tail.readUInt32LE(4) !== TAIL_MAGIC)
      return bad('bad record trailer');
    let meta: T;
    try {
      meta = JSON.parse(Buffer.from(metaBytes).toString('utf8')) as T;
    } catch {
      return bad('unparsable record meta');
    }
    frames.push({ meta, start: pos, end, bodyStart, bodyEnd });
    pos = end;
  }
  return { frames, validEnd: pos, torn: false };
}

/** The body of `frame` in `buf` parsed as JSON (empty body → `undefined`). */
export function frameBody(buf: Uint8Array, frame: Frame): unknown {
  if (frame.bodyEnd === frame.bodyStart) return undefined;
  return JSON.parse(
    Buffer.from(
      buf.buffer,
      buf.byteOffset + frame.bodyStart,
      frame.bodyEnd - frame.bodyStart,
    ).toString('utf8'),
  );
}

// ---------------------------------------------------------------------------- records

/** A session header as stored: every field but messages and children; dates in epoch ms. */
export interface HeaderJson {
  id: string;
  title: string;
  folder: string;
  parentId?: string;
  createdAt: number;
  updatedAt: number;
  model: string;
  provider: string;
  tokenCount: number;
  costUsd: number;
  turnCount: number;
  metadata: Record<string, string>;
  status: string;
  branchedAtTurn?: number;
  revision: number;
  archivedAt?: number;
  mode?: string;
  state?: JsonValue;
}

/**
 * Meta of a snapshot's first frame; its body is the JSON array of messages. Format 3
 * snapshots have a second frame, the message-offset table (`OffsetsMeta`).
 */
export interface SnapshotMeta {
  v: number;
  kind: 'snapshot';
  header: HeaderJson;
  messageCount: number;
  /** Merge lineage (format 3); absent in older snapshots (`readLineage(undefined)`). */
  lineage?: HistoryLineage;
}

/**
 * Meta of a format-3 snapshot's second frame. Its body is the binary offset table:
 * `count + 1` entries of 8 bytes (u32 LE each): entry `i < count` = the byte offset of
 * message `i`'s JSON inside the first frame's body and the CRC-32 of that JSON; entry
 * `count` = the body's length and 0. Message `i` spans `[off(i), off(i + 1) − 1)` (the
 * byte at `off(i + 1) − 1` is the `,` or `]` after it). See `format/message-offsets.ts`.
 */
export interface OffsetsMeta {
  v: number;
  kind: 'offsets';
  count: number;
}

/**
 * Meta of a commit-log record; its body is the JSON array of appended messages (empty
 * when none). `header` is the complete header after the record; `seq` counts records
 * since the snapshot (1, 2, …). `kind: 'reparent'` records change only `parentId` (a
 * deleted parent's children are promoted) and keep the revision.
 */
export interface LogMeta {
  v: number;
  kind: 'commit' | 'reparent';
  seq: number;
  header: HeaderJson;
  messageCount: number;
  appended: number;
  /** Merge lineage after the record (format 3); absent in older records. */
  lineage?: HistoryLineage;
  /** UTF-8 byte length of each appended message's JSON (format 3), for folds. */
  sizes?: number[];
}

/** Meta of an event record; its body is the payload JSON. */
export interface EventMeta {
  v: number;
  sequence: number;
  revision: number;
  at: number;
  type: string;
}

/** An index entry: a summary without `children` (derived), dates in epoch ms. */
export type IndexEntryJson = HeaderJson & { messageCount: number };

/** Meta of an index record (no body). */
export type IndexMeta =
  | { v: number; op: 'put'; entry: IndexEntryJson }
  | { v: number; op: 'del'; id: string }
  /**
   * The first record of every rewritten index (compaction, repair): a random id, so a
   * reader that cached a position in an older file whose inode number the new file reuses
   * sees a different first record and re-reads the file from the start.
   */
  | { v: number; op: 'gen'; id: string };

/** A session's header in its stored JSON form. */
export function headerToJson(s: Omit<Session<unknown>, 'messages' | 'children'>): HeaderJson {
  const h: HeaderJson = {
    id: s.id,
    title: s.title,
    folder: s.folder,
    createdAt: s.createdAt.getTime(),
    updatedAt: s.updatedAt.getTime(),
    model: s.model,
    provider: s.provider,
    tokenCount: s.tokenCount,
    costUsd: s.costUsd,
    turnCount: s.turnCount,
    metadata: { ...s.metadata },
    status: s.status,
    revision: s.revision,
  };
  if (s.parentId !== undefined) h.parentId = s.parentId;
  if (s.branchedAtTurn !== undefined) h.branchedAtTurn = s.branchedAtTurn;
  if (s.archivedAt !== undefined) h.archivedAt = s.archivedAt.getTime();
  if (s.mode !== undefined) h.mode = s.mode;
  if (s.state !== undefined) h.state = s.state;
  return h;
}

/** A stored header as the session fields the API returns (fresh objects). */
export function headerFromJson(h: HeaderJson): Omit<Session<never>, 'messages' | 'children'> {
  const out: Omit<Session<never>, 'messages' | 'children'> = {
    id: h.id,
    title: h.title,
    folder: h.folder,
    createdAt: new Date(h.createdAt),
    updatedAt: new Date(h.updatedAt),
    model: h.model,
    provider: h.provider,
    tokenCount: h.tokenCount,
    costUsd: h.costUsd,
    turnCount: h.turnCount,
    metadata: { ...h.metadata },
    status: h.status,
    revision: h.revision,
  };
  if (h.parentId !== undefined) out.parentId = h.parentId;
  if (h.branchedAtTurn !== undefined) out.branchedAtTurn = h.branchedAtTurn;
  if (h.archivedAt !== undefined) out.archivedAt = new Date(h.archivedAt);
  if (h.mode !== undefined) out.mode = h.mode;
  if (h.state !== undefined) out.state = structuredClone(h.state);
  return out;
}

/** A summary from an index entry and the derived children. */
export function summaryFromEntry(e: IndexEntryJson, children: string[]): SessionSummary {
  const { messageCount, ...header } = e;
  return { ...headerFromJson(header), messageCount, children };
}

/** Why `h` is not a usable stored header, or `undefined`. */
export function headerProblem(h: unknown, id: string): string | undefined {
  if (typeof h !== 'object' || h === null) return 'header is missing';
  const r = h as Record<string, unknown>;
  if (r.id !== id) return `header id ${JSON.stringify(r.id)} does not match the folder`;
  for (const k of ['title', 'folder', 'model', 'provider', 'status'])
    if (typeof r[k] !== 'string') return `header.${k} is not a string`;
  for (const k of ['createdAt', 'updatedAt', 'tokenCount', 'costUsd', 'turnCount'])
    if (typeof r[k] !== 'number' || !Number.isFinite(r[k])) return `header.${k} is not a number`;
  if (typeof r.revision !== 'number' || !Number.isSafeInteger(r.revision) || r.revision < 1)
    return 'header.revision is not a positive integer';
  if (typeof r.metadata !== 'object' || r.metadata === null) return 'header.metadata is missing';
  return undefined;
}

/** A version-1 `session.json` as the seed's simple format wrote it (ISO dates). */
export interface LegacySessionJson {
  version: 1;
  id: string;
  title?: string;
  folder?: string;
  parentId?: string;
  createdAt: string;
  updatedAt: string;
  model?: string;
  provider?: string;
  tokenCount?: number;
  costUsd?: number;
  turnCount?: number;
  metadata?: Record<string, string>;
  status?: string;
  messages: unknown[];
  branchedAtTurn?: number;
  revision?: number;
  archivedAt?: string;
  mode?: string;
  state?: JsonValue;
}

/** Migrates a version-1 session file to a header and messages. Throws on a bad file. */
export function migrateLegacy(
  raw: unknown,
  id: string,
): { header: HeaderJson; messages: unknown[] } {
  const s = raw as Partial<LegacySessionJson>;
  if (typeof s !== 'object' || s === null || s.version !== 1) {
    throw new Error('session.json is not a version-1 session');
  }
  if (!Array.isArray(s.messages)) throw new Error('session.json has no messages array');
  const createdAt = Date.parse(String(s.createdAt));
  const updatedAt = Date.parse(String(s.updatedAt));
  if (!Number.isFinite(createdAt) || !Number.isFinite(updatedAt))
    throw new Error('session.json has bad dates');
  const header: HeaderJson = {
    id,
    title: s.title ?? '',
    folder: s.folder ?? '',
    createdAt,
    updatedAt,
    model: s.model ?? '',
    provider: s.provider ?? '',
    tokenCount: s.tokenCount ?? 0,
    costUsd: s.costUsd ?? 0,
    turnCount: s.turnCount ?? 0,
    metadata: { ...(s.metadata ?? {}) },
    status: s.status ?? 'active',
    revision: s.revision ?? 1,
  };
  if (s.parentId !== undefined) header.parentId = s.parentId;
  if (s.branchedAtTurn !== undefined) header.branchedAtTurn = s.branchedAtTurn;
  if (s.archivedAt !== undefined) header.archivedAt = Date.parse(s.archivedAt);
  if (s.mode !== undefined) header.mode = s.mode;
  if (s.state !== undefined) header.state = s.state;
  const problem = headerProblem(header, id);
  if (problem) throw new Error(problem);
  return { header, messages: s.messages };
}
