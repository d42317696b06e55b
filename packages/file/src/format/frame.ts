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

import { crc32 } from './crc32.js';

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

/** The prefix at `buf[0..24)`, or `undefined` when it is not a valid prefix. */
export function decodePrefix(buf: Uint8Array): FramePrefix | undefined {
  if (buf.length < PREFIX_BYTES) return undefined;
  const view = Buffer.from(buf.buffer, buf.byteOffset, PREFIX_BYTES);
  if (view.readUInt32LE(0) !== FRAME_MAGIC) return undefined;
  if (view.readUInt32LE(20) !== crc32(view.subarray(0, 20))) return undefined;
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
  let pos = offset;
  while (pos < buf.length) {
    const rest = buf.length - pos;
    if (rest < PREFIX_BYTES) return { frames, validEnd: pos, torn: true };
    const prefix = decodePrefix(buf.subarray(pos, pos + PREFIX_BYTES));
    if (!prefix) {
      if (allZero(buf, pos)) return { frames, validEnd: pos, torn: true };
      return { frames, validEnd: pos, torn: false, corrupt: `bad record header at byte ${pos}` };
    }
    if (prefix.total > rest) return { frames, validEnd: pos, torn: true };
    const metaStart = pos + PREFIX_BYTES;
    const bodyStart = metaStart + prefix.metaLen;
    const bodyEnd = bodyStart + prefix.bodyLen;
    const end = pos + prefix.total;
    const last = end === buf.length;
    const bad = (why: string): ParsedFrames<T> =>
      last
        ? { frames, validEnd: pos, torn: true }
        : { frames, validEnd: pos, torn: false, corrupt: `${why} in the record at byte ${pos}` };
    const metaBytes = buf.subarray(metaStart, bodyStart);
    if (crc32(metaBytes) !== prefix.metaCrc) return bad('meta checksum mismatch');
    if (checkBodies && crc32(buf.subarray(bodyStart, bodyEnd)) !== prefix.bodyCrc)
      return bad('body checksum mismatch');
    const tail = Buffer.from(buf.buffer, buf.byteOffset + bodyEnd, TAIL_BYTES);
    if (tail.readUInt32LE(0) !== prefix.total || tail.readUInt32LE(4) !== TAIL_MAGIC)
      return bad('bad record trailer');
    let meta: T;
    try {
      // A view of the bytes, decoded in place (`Buffer.from(metaBytes)` would copy them).
      const view = Buffer.from(metaBytes.buffer, metaBytes.byteOffset, metaBytes.length);
      meta = JSON.parse(view.toString('utf8')) as T;
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
