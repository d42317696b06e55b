// The bytes of `search.txt` (format 4): the magic "SKS4", then chunks, each the raw-deflate
// compression of a piece of the session's search text (core's `searchTextOf`: "A" + the
// lower-cased text of each message). A commit appends one chunk (its turn's text); a
// fold merges the chunks appended since the last fold into one; a rewrite stores the
// whole text as one chunk. The text is the chunks' texts
// concatenated. Format 3 stored the text itself, uncompressed; such files are read as
// they are (and rewritten as format 4 on their next append). Pure (no I/O).
//
//   chunk: "Z" | u32 LE length of the compressed bytes | u32 LE CRC-32 of them | bytes

import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { crc32 } from './crc32.js';

/** The first bytes of a format-4 search file. */
export const SEARCH_MAGIC = Buffer.from('SKS4', 'latin1');
const CHUNK_MARK = 0x5a; // "Z"
const CHUNK_HEAD = 9;

/** Whether `buf` (the file, or at least its first 4 bytes) is a format-4 search file. */
export function isChunkedSearch(buf: Uint8Array): boolean {
  return buf.length >= SEARCH_MAGIC.length && SEARCH_MAGIC.equals(buf.subarray(0, 4));
}

/**
 * One chunk holding `text`, compressed. `fast` (zlib level 1: a commit's turn, compressed
 * while its fdatasync runs, or a fold's compaction) trades about a fifth more bytes for a
 * compression several times cheaper than the default level's.
 */
export function encodeSearchChunk(text: string, fast = false): Buffer {
  const packed = deflateRawSync(Buffer.from(text, 'utf8'), fast ? { level: 1 } : {});
  const out = Buffer.allocUnsafe(CHUNK_HEAD + packed.length);
  out[0] = CHUNK_MARK;
  out.writeUInt32LE(packed.length, 1);
  out.writeUInt32LE(crc32(packed), 5);
  packed.copy(out, CHUNK_HEAD);
  return out;
}

/** A whole format-4 search file holding `text` (one chunk; none when `text` is empty). */
export function encodeSearchFile(text: string): Buffer {
  return text ? Buffer.concat([SEARCH_MAGIC, encodeSearchChunk(text)]) : Buffer.from(SEARCH_MAGIC);
}

/** What a search file holds: its text, and how many chunks it took (format 4). */
export interface DecodedSearch {
  text: string;
  chunks: number;
  /** Some bytes were no chunk (a torn or damaged append): their text is missing. */
  damaged: boolean;
}

/**
 * The search text a file's bytes hold. Format 3 (no magic) is the text itself. A chunk
 * that is cut short or fails its checksum (an append a crash cut short, damage) is
 * skipped, and reading goes on at the next byte where a whole chunk starts: a search then
 * misses that turn's text until `repair()` rewrites the file, never matches across it.
 */
export function decodeSearchFile(buf: Buffer): DecodedSearch {
  if (!isChunkedSearch(buf)) return { text: buf.toString('utf8'), chunks: 0, damaged: false };
  const parts: string[] = [];
  let damaged = false;
  let pos = SEARCH_MAGIC.length;
  while (pos < buf.length) {
    const text = chunkAt(buf, pos);
    if (text === undefined) {
      damaged = true;
      pos++;
      continue;
    }
    parts.push(text.text);
    pos = text.end;
  }
  return { text: parts.join(''), chunks: parts.length, damaged };
}

/** Where a whole, checksummed chunk lies in a format-4 file. */
interface ChunkSpan {
  start: number;
  end: number;
}

/**
 * The file with its newest chunks that are each under `keepBytes` compressed bytes merged
 * into one chunk (zlib level 1), the chunks before them kept byte for byte: the same
 * text. A fold calls it, so each compaction costs what was appended since the one before
 * (the chunks it made reach `keepBytes` and are left alone), not the whole history, while
 * a chunk of that size compresses about as well as the whole text would (deflate looks
 * back 32 KiB at most). `undefined` when there is nothing to merge, or when the file is
 * not format 4 or holds bytes that are no whole chunk (it is left for `repair()`). Pure.
 */
export function mergeNewestChunks(buf: Buffer, keepBytes: number): Buffer | undefined {
  if (!isChunkedSearch(buf)) return undefined;
  const spans: ChunkSpan[] = [];
  for (let pos = SEARCH_MAGIC.length; pos < buf.length; ) {
    const span = checkedChunkAt(buf, pos);
    if (!span) return undefined;
    spans.push(span);
    pos = span.end;
  }
  let first = spans.length;
  while (first > 0 && spans[first - 1]!.end - spans[first - 1]!.start - CHUNK_HEAD < keepBytes)
    first--;
  if (spans.length - first < 2) return undefined;
  const texts: string[] = [];
  for (const span of spans.slice(first)) {
    const text = inflateChunk(buf, span);
    if (text === undefined) return undefined;
    texts.push(text);
  }
  const head = buf.subarray(0, spans[first]!.start);
  return Buffer.concat([head, encodeSearchChunk(texts.join(''), true)]);
}

/** The whole chunk starting at `pos` whose checksum holds, undecoded; or `undefined`. */
function checkedChunkAt(buf: Buffer, pos: number): ChunkSpan | undefined {
  if (buf[pos] !== CHUNK_MARK || pos + CHUNK_HEAD > buf.length) return undefined;
  const end = pos + CHUNK_HEAD + buf.readUInt32LE(pos + 1);
  if (end > buf.length) return undefined;
  if (crc32(buf.subarray(pos + CHUNK_HEAD, end)) !== buf.readUInt32LE(pos + 5)) return undefined;
  return { start: pos, end };
}

/** The chunk starting at `pos`, decoded, or `undefined` when none starts there. */
function chunkAt(buf: Buffer, pos: number): { text: string; end: number } | undefined {
  const span = checkedChunkAt(buf, pos);
  if (!span) return undefined;
  const text = inflateChunk(buf, span);
  return text === undefined ? undefined : { text, end: span.end };
}

/** The text of a checksummed chunk, or `undefined` when it does not inflate. */
function inflateChunk(buf: Buffer, span: ChunkSpan): string | undefined {
  try {
    return inflateRawSync(buf.subarray(span.start + CHUNK_HEAD, span.end)).toString('utf8');
  } catch {
    return undefined;
  }
}
