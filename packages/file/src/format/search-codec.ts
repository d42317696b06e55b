// The bytes of `search.txt` (format 4): the magic "SKS4", then chunks, each the raw-deflate
// compression of a piece of the session's search text (core's `searchTextOf`: "A" + the
// lower-cased text of each message). A commit appends one chunk (its turn's text); a
// fold or a rewrite stores the whole text as one chunk. The text is the chunks' texts
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

/**
 * A whole format-4 search file holding `text` (one chunk; none when `text` is empty).
 * `fast` as for `encodeSearchChunk` (a fold's compaction, on the commit path).
 */
export function encodeSearchFile(text: string, fast = false): Buffer {
  return text
    ? Buffer.concat([SEARCH_MAGIC, encodeSearchChunk(text, fast)])
    : Buffer.from(SEARCH_MAGIC);
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

/** The chunk starting at `pos`, decoded, or `undefined` when none starts there. */
function chunkAt(buf: Buffer, pos: number): { text: string; end: number } | undefined {
  if (buf[pos] !== CHUNK_MARK || pos + CHUNK_HEAD > buf.length) return undefined;
  const len = buf.readUInt32LE(pos + 1);
  const end = pos + CHUNK_HEAD + len;
  if (end > buf.length) return undefined;
  const packed = buf.subarray(pos + CHUNK_HEAD, end);
  if (crc32(packed) !== buf.readUInt32LE(pos + 5)) return undefined;
  try {
    return { text: inflateRawSync(packed).toString('utf8'), end };
  } catch {
    return undefined;
  }
}
