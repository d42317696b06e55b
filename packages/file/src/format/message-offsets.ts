// The message-offset table of a format-3 snapshot: where each message's JSON sits in the
// snapshot body and its CRC-32, so a window read fetches and checks only the messages it
// returns (see `OffsetsMeta` in records.ts for the byte layout).

import { crc32 } from './crc32.js';
import { encodeFrame } from './frame.js';
import type { OffsetsMeta, SnapshotMeta } from './records.js';
import { FORMAT_VERSION } from './version.js';

/** Bytes per table entry: u32 offset + u32 CRC-32. */
export const ENTRY_BYTES = 8;
const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]
const COMMA = 0x2c; // ,

/** A snapshot body (the JSON array of messages) with its offset table. */
export interface TabledBody {
  count: number;
  body: Buffer;
  table: Buffer;
}

/**
 * The body `JSON.stringify(messages)` would give, built one message at a time so the
 * table of offsets and per-message CRCs comes with it.
 */
export function encodeMessagesBody(messages: readonly unknown[]): TabledBody {
  const parts = messages.map((m) => Buffer.from(JSON.stringify(m), 'utf8'));
  return joinParts(
    parts,
    parts.map((p) => crc32(p)),
  );
}

function joinParts(parts: readonly Buffer[], crcs: readonly number[]): TabledBody {
  let length = 2 + Math.max(0, parts.length - 1);
  for (const p of parts) length += p.length;
  const body = Buffer.allocUnsafe(length);
  const table = Buffer.alloc((parts.length + 1) * ENTRY_BYTES);
  body[0] = OPEN;
  let pos = 1;
  parts.forEach((p, i) => {
    if (i > 0) body[pos++] = COMMA;
    table.writeUInt32LE(pos, i * ENTRY_BYTES);
    table.writeUInt32LE(crcs[i]!, i * ENTRY_BYTES + 4);
    p.copy(body, pos);
    pos += p.length;
  });
  body[pos] = CLOSE;
  table.writeUInt32LE(length, parts.length * ENTRY_BYTES);
  return { count: parts.length, body, table };
}

/** The bytes of a format-3 snapshot file: the snapshot frame, then the offsets frame. */
export function encodeSnapshotFile(meta: SnapshotMeta, tabled: TabledBody): Buffer {
  const offsets: OffsetsMeta = { v: FORMAT_VERSION, kind: 'offsets', count: tabled.count };
  return Buffer.concat([encodeFrame(meta, tabled.body), encodeFrame(offsets, tabled.table)]);
}

/** One piece of a fold: a stored JSON array body and what is known of its messages. */
export interface BodyPiece {
  /** The array's bytes, `[` … `]` (already checked against its frame's CRC). */
  bytes: Buffer;
  count: number;
  /** The piece's own offset table (a snapshot's), when it has one. */
  table?: Buffer | undefined;
  /** Byte size of each message (a log record's `sizes`), when there is no table. */
  sizes?: readonly number[] | undefined;
  /** Only the first this many of its messages are kept (a later truncation cut it). */
  keep?: number | undefined;
}

/**
 * The pieces joined into one body with its table, copying the stored bytes without
 * parsing them; `undefined` when a piece's framing does not add up (the caller then
 * folds through a full load).
 */
export function spliceBodies(pieces: readonly BodyPiece[]): TabledBody | undefined {
  const inner: Buffer[] = [];
  const starts: number[] = [];
  const crcs: number[] = [];
  let pos = 1; // after "["
  for (const piece of pieces) {
    const b = piece.bytes;
    if (b.length < 2 || b[0] !== OPEN || b[b.length - 1] !== CLOSE) return undefined;
    if (piece.count === 0) {
      if (b.length !== 2) return undefined;
      continue;
    }
    const kept = piece.keep ?? piece.count;
    if (kept < 0 || kept > piece.count) return undefined;
    if (kept === 0) continue;
    if (inner.length > 0) pos += 1; // the comma between pieces
    const local = localOffsets(piece);
    if (!local) return undefined;
    for (let i = 0; i < kept; i++) {
      starts.push(pos + local.starts[i]! - 1);
      crcs.push(local.crcs[i]!);
    }
    // Up to the `,` after the last kept message (message i ends one byte before i + 1).
    const end = kept < piece.count ? local.starts[kept]! - 1 : b.length - 1;
    inner.push(b.subarray(1, end));
    pos += end - 1;
  }
  const count = starts.length;
  const length = pos + 1;
  const body = Buffer.allocUnsafe(length);
  body[0] = OPEN;
  let at = 1;
  inner.forEach((part, i) => {
    if (i > 0) body[at++] = COMMA;
    part.copy(body, at);
    at += part.length;
  });
  body[at] = CLOSE;
  const table = Buffer.alloc((count + 1) * ENTRY_BYTES);
  for (let i = 0; i < count; i++) {
    table.writeUInt32LE(starts[i]!, i * ENTRY_BYTES);
    table.writeUInt32LE(crcs[i]!, i * ENTRY_BYTES + 4);
  }
  table.writeUInt32LE(length, count * ENTRY_BYTES);
  return { count, body, table };
}

/** Message starts (inside `piece.bytes`) and CRCs of a piece, checked against its bytes. */
function localOffsets(piece: BodyPiece): { starts: number[]; crcs: number[] } | undefined {
  const b = piece.bytes;
  const starts: number[] = [];
  const crcs: number[] = [];
  if (piece.table) {
    const t = piece.table;
    if (t.length !== (piece.count + 1) * ENTRY_BYTES) return undefined;
    if (t.readUInt32LE(piece.count * ENTRY_BYTES) !== b.length) return undefined;
    for (let i = 0; i < piece.count; i++) {
      const start = t.readUInt32LE(i * ENTRY_BYTES);
      const next = t.readUInt32LE((i + 1) * ENTRY_BYTES);
      if (start < 1 || next <= start || b[next - 1] !== (i + 1 < piece.count ? COMMA : CLOSE))
        return undefined;
      starts.push(start);
      crcs.push(t.readUInt32LE(i * ENTRY_BYTES + 4));
    }
    return { starts, crcs };
  }
  const sizes = piece.sizes;
  if (!sizes || sizes.length !== piece.count) return undefined;
  let pos = 1;
  for (let i = 0; i < sizes.length; i++) {
    const size: number = sizes[i] ?? 0;
    const end = pos + size;
    if (!Number.isSafeInteger(size) || size < 1 || end >= b.length) return undefined;
    if (b[end] !== (i + 1 < sizes.length ? COMMA : CLOSE)) return undefined;
    starts.push(pos);
    crcs.push(crc32(b.subarray(pos, end)));
    pos = end + 1;
  }
  return pos === b.length ? { starts, crcs } : undefined;
}

/** Entry `i` of a table slice that begins at entry `first`. */
export function tableEntry(
  slice: Buffer,
  first: number,
  i: number,
): { offset: number; crc: number } {
  const at = (i - first) * ENTRY_BYTES;
  return { offset: slice.readUInt32LE(at), crc: slice.readUInt32LE(at + 4) };
}

/**
 * A log record's body (the JSON array `JSON.stringify(messages)` gives) and the byte size
 * of each message's JSON, which lets a later fold build the offset table without parsing.
 */
export function encodeAppendBody(messages: readonly unknown[]): { body: Buffer; sizes: number[] } {
  // One string and one buffer for the whole body: a buffer per message costs more than
  // measuring each message's UTF-8 length.
  const parts = messages.map((m) => JSON.stringify(m));
  const sizes = parts.map((p) => Buffer.byteLength(p, 'utf8'));
  return { body: Buffer.from(`[${parts.join(',')}]`, 'utf8'), sizes };
}
