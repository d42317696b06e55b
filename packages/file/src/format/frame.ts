// The record frame: every record of a snapshot, commit log, event log and the index is
// one frame:
//
//   prefix (24 bytes): magic "SKR2" | metaLen | bodyLen | crc(meta) | crc(body) | crc(prefix[0..20))
//   meta:              UTF-8 JSON (small: the header and counts)
//   body:              UTF-8 JSON or empty (messages, event payload)
//   tail (8 bytes):    total frame length | magic "SKRE"
//
// All integers u32 little-endian. The prefix lets a reader skip a body it does not need
// (listing never reads bodies); the tail lets a writer find the last record from the end
// of the file in O(1). A frame that runs past the end of the file is a torn append
// (never acknowledged) and is ignored; a damaged frame followed by more data is corruption.

import { crc32, crc32Range } from './crc32.js';

export const FRAME_MAGIC = 0x32524b53; // "SKR2"
export const TAIL_MAGIC = 0x45524b53; // "SKRE"
export const PREFIX_BYTES = 24;
export const TAIL_BYTES = 8;
const EMPTY = new Uint8Array(0);

/** One frame's bytes for `meta` (JSON) and `body` (already encoded, or none). */
export function encodeFrame(meta: unknown, body: Uint8Array = EMPTY): Buffer {
  const metaBytes = Buffer.from(JSON.stringify(meta), 'utf8');
  const total = PREFIX_BYTES + metaBytes.length + body.length + TAIL_BYTES;
  const out = Buffer.allocUnsafe(total);
  out.writeUInt32LE(FRAME_MAGIC, 0);
  out.writeUInt32LE(metaBytes.length, 4);
  out.writeUInt32LE(body.length, 8);
  out.writeUInt32LE(crc32(metaBytes), 12);
  out.writeUInt32LE(crc32(body), 16);
  out.writeUInt32LE(crc32(out.subarray(0, 20)), 20);
  metaBytes.copy(out, PREFIX_BYTES);
  out.set(body, PREFIX_BYTES + metaBytes.length);
  out.writeUInt32LE(total, total - TAIL_BYTES);
  out.writeUInt32LE(TAIL_MAGIC, total - 4);
  return out;
}

/** A decoded frame prefix (the fixed-size part before the meta). */
export interface FramePrefix {
  metaLen: number;
  bodyLen: number;
  metaCrc: number;
  bodyCrc: number;
  /** Whole frame length including prefix and tail. */
  total: number;
}

/** `buf` as a Buffer over the same bytes (itself when it already is one: no new view). */
function asBuffer(buf: Uint8Array): Buffer {
  return Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.length);
}

/**
 * Whether the 24 bytes at `buf[pos..)` are a frame prefix: the magic and the prefix's own
 * checksum. Read in place on the parent buffer: the views made per frame for this (100,000
 * at an index open) were garbage the collector had to sweep.
 */
function isPrefixAt(buf: Buffer, pos: number): boolean {
  return (
    buf.readUInt32LE(pos) === FRAME_MAGIC &&
    buf.readUInt32LE(pos + 20) === crc32Range(buf, pos, pos + 20)
  );
}

/** The prefix at `buf[0..24)`, or `undefined` when it is not a valid prefix. */
export function decodePrefix(buf: Uint8Array): FramePrefix | undefined {
  if (buf.length < PREFIX_BYTES) return undefined;
  const view = asBuffer(buf);
  if (!isPrefixAt(view, 0)) return undefined;
  const metaLen = view.readUInt32LE(4);
  const bodyLen = view.readUInt32LE(8);
  return {
    metaLen,
    bodyLen,
    metaCrc: view.readUInt32LE(12),
    bodyCrc: view.readUInt32LE(16),
    total: PREFIX_BYTES + metaLen + bodyLen + TAIL_BYTES,
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

/** Called by `scanFrames` with each good frame's parsed meta and byte offsets. */
export type FrameVisitor<T> = (
  meta: T,
  start: number,
  end: number,
  bodyStart: number,
  bodyEnd: number,
) => void;

/** What `scanFrames` found: `ParsedFrames` without the frames (they went to the visitor). */
export type FrameScan = Omit<ParsedFrames, 'frames'>;

/**
 * Checks and parses every frame of `buf` from `offset`, handing each good one to `visit`
 * in file order instead of collecting them (a whole index read applies its 100,000
 * records as they come, with no `Frame` object each). The checks and the torn/corrupt
 * verdicts are `parseFrames`'s; `visit` is called for every frame before `validEnd`.
 */
export function scanFrames<T = unknown>(
  input: Uint8Array,
  offset: number,
  checkBodies: boolean,
  visit: FrameVisitor<T>,
): FrameScan {
  const buf = asBuffer(input);
  let pos = offset;
  while (pos < buf.length) {
    const rest = buf.length - pos;
    if (rest < PREFIX_BYTES) return { validEnd: pos, torn: true };
    if (!isPrefixAt(buf, pos)) {
      if (allZero(buf, pos)) return { validEnd: pos, torn: true };
      return { validEnd: pos, torn: false, corrupt: `bad record header at byte ${pos}` };
    }
    const metaStart = pos + PREFIX_BYTES;
    const bodyStart = metaStart + buf.readUInt32LE(pos + 4);
    const bodyEnd = bodyStart + buf.readUInt32LE(pos + 8);
    const end = bodyEnd + TAIL_BYTES;
    if (end - pos > rest) return { validEnd: pos, torn: true };
    const why = frameProblem(buf, pos, bodyStart, bodyEnd, checkBodies);
    let meta: T | undefined; // stays undefined only on damage: JSON.parse never returns it
    if (why === undefined) {
      try {
        meta = JSON.parse(buf.toString('utf8', metaStart, bodyStart)) as T;
      } catch {}
    }
    if (meta === undefined) {
      // Damage in the last frame of the file is a torn append; before more data, corruption.
      if (end === buf.length) return { validEnd: pos, torn: true };
      const what = why ?? 'unparsable record meta';
      return { validEnd: pos, torn: false, corrupt: `${what} in the record at byte ${pos}` };
    }
    visit(meta, pos, end, bodyStart, bodyEnd);
    pos = end;
  }
  return { validEnd: pos, torn: false };
}

/**
 * What is wrong with the frame whose (valid) prefix is at `pos` and whose body spans
 * `[bodyStart, bodyEnd)`, or `undefined`: meta checksum, body checksum (when
 * `checkBodies`), trailer.
 */
function frameProblem(
  buf: Buffer,
  pos: number,
  bodyStart: number,
  bodyEnd: number,
  checkBodies: boolean,
): string | undefined {
  if (crc32(buf.subarray(pos + PREFIX_BYTES, bodyStart)) !== buf.readUInt32LE(pos + 12))
    return 'meta checksum mismatch';
  if (checkBodies && crc32(buf.subarray(bodyStart, bodyEnd)) !== buf.readUInt32LE(pos + 16))
    return 'body checksum mismatch';
  if (
    buf.readUInt32LE(bodyEnd) !== bodyEnd + TAIL_BYTES - pos ||
    buf.readUInt32LE(bodyEnd + 4) !== TAIL_MAGIC
  )
    return 'bad record trailer';
  return undefined;
}

/**
 * Parses every frame of `buf` from `offset`. Checks prefix, meta and (when `checkBodies`)
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
  const scan = scanFrames<T>(buf, offset, checkBodies, (meta, start, end, bodyStart, bodyEnd) => {
    frames.push({ meta, start, end, bodyStart, bodyEnd });
  });
  return { frames, ...scan };
}

/** The body of `frame` in `buf` parsed as JSON (empty body → `undefined`). */
export function frameBody(buf: Uint8Array, frame: Frame): unknown {
  if (frame.bodyEnd === frame.bodyStart) return undefined;
  return JSON.parse(asBuffer(buf).toString('utf8', frame.bodyStart, frame.bodyEnd));
}
