// The bytes of `search.txt` (formats 4 and 5): the magic "SKS4", then chunks, each a piece
// of the session's search text (core's `searchTextOf`: "A" + the lower-cased text of each
// message). A commit appends one chunk with its turn's text as stored (uncompressed)
// deflate blocks; once stored chunks add up they are merged with the small chunks before
// them into one compressed chunk (`mergeNewestChunks`), as a fold does; a rewrite stores
// the whole text as one compressed chunk. The text is the chunks' texts concatenated.
// Format 6 adds "C" chunks: a truncation's cut (u32 LE: how many UTF-16 code units of the
// text so far it drops from the end), so a commit that drops messages appends a few bytes
// instead of rewriting the text; a merge meeting one rewrites the file as one chunk.
// Format 5 compresses with Brotli ("B" chunks: its window of up to 4 MiB finds the
// repeats of a long conversation that deflate's 32 KiB cannot); format 4's raw-deflate
// chunks ("Z") are read as they are. Format 3 stored the text itself, uncompressed; such
// files are read as they are (and rewritten as chunks on their next append). Pure (no I/O).
//
//   chunk: "Z" or "B" | u32 LE length of the packed bytes | u32 LE CRC-32 of them | bytes

import {
  brotliCompress,
  brotliCompressSync,
  brotliDecompressSync,
  inflateRawSync,
  constants as zlibConstants,
} from 'node:zlib';
import { crc32 } from './crc32.js';

/** The first bytes of a format-4 search file. */
export const SEARCH_MAGIC = Buffer.from('SKS4', 'latin1');
const CHUNK_MARK = 0x5a; // "Z": raw deflate (stored blocks, or format 4's compressed ones)
const BROTLI_MARK = 0x42; // "B": Brotli (format 5)
const CUT_MARK = 0x43; // "C": drop the end of the text before it (format 6)
/** Brotli quality of merges and rewrites: about deflate's speed, far fewer bytes. */
const BROTLI_QUALITY = 5;
const CHUNK_HEAD = 9;

/** Whether `buf` (the file, or at least its first 4 bytes) is a format-4 search file. */
export function isChunkedSearch(buf: Uint8Array): boolean {
  return buf.length >= SEARCH_MAGIC.length && SEARCH_MAGIC.equals(buf.subarray(0, 4));
}

/** The longest stored deflate block (its length field has 16 bits). */
const STORED_BLOCK_MAX = 0xffff;
/** A stored block's header: the block-type byte, LEN and its complement NLEN. */
const STORED_HEAD = 5;

/**
 * One chunk holding `text`, compressed with Brotli, its window sized to the text (a
 * small text sets up a small encoder).
 */
export function encodeSearchChunk(text: string): Buffer {
  const data = Buffer.from(text, 'utf8');
  return chunkOf(brotliCompressSync(data, brotliOptions(data.length)), BROTLI_MARK);
}

/**
 * `encodeSearchChunk`, compressed in libuv's thread pool: the event loop only sets the
 * encoder up. Rejects with what the compressor throws.
 */
export function encodeSearchChunkInPool(text: string): Promise<Buffer> {
  const data = Buffer.from(text, 'utf8');
  return new Promise((resolve, reject) =>
    brotliCompress(data, brotliOptions(data.length), (e, packed) =>
      e ? reject(e) : resolve(chunkOf(packed, BROTLI_MARK)),
    ),
  );
}

/** The compressor's settings for `bytes` of text: its window sized to them. */
function brotliOptions(bytes: number) {
  const window = Math.min(22, Math.max(10, Math.ceil(Math.log2(bytes + 1))));
  return {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlibConstants.BROTLI_PARAM_LGWIN]: window,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes,
    },
  };
}

/**
 * One chunk holding `text` uncompressed: raw deflate made of stored blocks (RFC 1951,
 * 3.2.4), which every inflater reads, so the file stays format 4 for any reader. A commit
 * appends its turn this way: node:zlib spends tens of microseconds setting up a stream
 * per call, more than compressing a turn takes, and a turn alone compresses poorly; its
 * text is compressed once, with its neighbours', when the stored chunks are merged.
 */
export function encodeStoredChunk(text: string): Buffer {
  const data = Buffer.from(text, 'utf8');
  const blocks = Math.max(1, Math.ceil(data.length / STORED_BLOCK_MAX));
  const packed = Buffer.allocUnsafe(data.length + blocks * STORED_HEAD);
  let at = 0;
  for (let b = 0; b < blocks; b++) {
    const part = data.subarray(b * STORED_BLOCK_MAX, (b + 1) * STORED_BLOCK_MAX);
    packed[at] = b === blocks - 1 ? 1 : 0; // BFINAL on the last block, BTYPE 00 (stored)
    packed.writeUInt16LE(part.length, at + 1);
    packed.writeUInt16LE(part.length ^ 0xffff, at + 3);
    part.copy(packed, at + STORED_HEAD);
    at += STORED_HEAD + part.length;
  }
  return chunkOf(packed, CHUNK_MARK);
}

/**
 * The data of raw deflate `packed` when it is stored blocks only (as `encodeStoredChunk`
 * writes them), read without zlib; `undefined` for any other deflate stream.
 */
function storedData(packed: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  for (let at = 0; at + STORED_HEAD <= packed.length; ) {
    const head = packed[at];
    const len = packed.readUInt16LE(at + 1);
    if ((head !== 0 && head !== 1) || (len ^ 0xffff) !== packed.readUInt16LE(at + 3))
      return undefined;
    const end = at + STORED_HEAD + len;
    if (end > packed.length) return undefined;
    parts.push(packed.subarray(at + STORED_HEAD, end));
    at = end;
    if (head === 1) {
      if (at !== packed.length) return undefined;
      return parts.length === 1 ? parts[0] : Buffer.concat(parts);
    }
  }
  return undefined;
}

/** A chunk of the packed bytes `packed` (`mark`: how they are packed). */
function chunkOf(packed: Buffer, mark: number): Buffer {
  const out = Buffer.allocUnsafe(CHUNK_HEAD + packed.length);
  out[0] = mark;
  out.writeUInt32LE(packed.length, 1);
  out.writeUInt32LE(crc32(packed), 5);
  packed.copy(out, CHUNK_HEAD);
  return out;
}

/**
 * A chunk that drops the last `units` UTF-16 code units of the text before it: the search
 * text of the messages a truncation dropped (core's `searchTextOf` of them is exactly the
 * end of the session's text).
 */
export function encodeCutChunk(units: number): Buffer {
  const packed = Buffer.allocUnsafe(4);
  packed.writeUInt32LE(units, 0);
  return chunkOf(packed, CUT_MARK);
}

/**
 * A whole search file holding `text` (one chunk, compressed or `stored`; none when `text`
 * is empty).
 */
export function encodeSearchFile(text: string, stored = false): Buffer {
  if (!text) return Buffer.from(SEARCH_MAGIC);
  return Buffer.concat([SEARCH_MAGIC, stored ? encodeStoredChunk(text) : encodeSearchChunk(text)]);
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
  let chunks = 0;
  let pos = SEARCH_MAGIC.length;
  while (pos < buf.length) {
    const span = checkedChunkAt(buf, pos);
    const text = span && !span.cut ? inflateChunk(buf, span) : undefined;
    if (span === undefined || (text === undefined && !span.cut)) {
      damaged = true;
      pos++;
      continue;
    }
    chunks++;
    pos = span.end;
    if (text !== undefined) {
      parts.push(text);
      continue;
    }
    const joined = parts.join('');
    const drop = packedOf(buf, span).readUInt32LE(0);
    parts.length = 0;
    parts.push(joined.slice(0, Math.max(0, joined.length - drop)));
  }
  return { text: parts.join(''), chunks, damaged };
}

/** Where a whole, checksummed chunk lies in a format-4 file. */
interface ChunkSpan {
  start: number;
  end: number;
  /** A Brotli chunk (else raw deflate). */
  brotli: boolean;
  /** A cut (`encodeCutChunk`), no text of its own. */
  cut: boolean;
}

/**
 * The file with its newest chunks merged into one compressed chunk (zlib level 1): the
 * stored (uncompressed) ones and the compressed ones under `keepBytes` deflated bytes,
 * back to the newest compressed chunk of at least `keepBytes`; the chunks before are
 * kept byte for byte: the same text. So a merge costs what was appended since the one
 * before (the chunks merges make reach `keepBytes` and are then left alone), not the
 * whole history, while a chunk of that size compresses about as well as the whole text
 * would (deflate looks back 32 KiB at most). `undefined` when there is nothing to merge
 * (no stored chunk, and fewer than two chunks to merge), or when the file is not format 4
 * or holds bytes that are no whole chunk (it is left for `repair()`). Pure.
 */
export function mergeNewestChunks(buf: Buffer, keepBytes: number): Buffer | undefined {
  const plan = planNewestMerge(buf, keepBytes);
  return plan && mergedFile(buf.subarray(0, plan.keep), plan.text && encodeSearchChunk(plan.text));
}

/** What merging a file's newest chunks takes (see `mergeNewestChunks`). */
export interface SearchMergePlan {
  /** Bytes at the file's start kept byte for byte (the magic at least). */
  keep: number;
  /** The text of the chunks after them, which the merge compresses into one. */
  text: string;
}

/**
 * The plan of `mergeNewestChunks(buf, keepBytes)`: what it keeps and what it compresses,
 * so the compression can run elsewhere; `undefined` when it would return `undefined`. Pure.
 */
export function planNewestMerge(buf: Buffer, keepBytes: number): SearchMergePlan | undefined {
  const spans = chunkSpans(buf);
  if (!spans) return undefined;
  // A cut reaches back into any chunk before it: the whole text becomes one chunk.
  if (spans.some((s) => s.cut))
    return { keep: SEARCH_MAGIC.length, text: decodeSearchFile(buf).text };
  // Back from the end, each chunk read once: stored ones and small compressed ones join.
  const texts: string[] = [];
  let stored = false;
  let first = spans.length;
  for (; first > 0; first--) {
    const span = spans[first - 1]!;
    const packed = packedOf(buf, span);
    const data = span.brotli ? undefined : storedData(packed);
    if (!data && packed.length >= keepBytes) break;
    const text = data ? data.toString('utf8') : unpack(packed, span.brotli);
    if (text === undefined) return undefined;
    texts.push(text);
    stored ||= data !== undefined;
  }
  if (texts.length < (stored ? 1 : 2)) return undefined;
  return { keep: spans[first]!.start, text: texts.reverse().join('') };
}

/** A merged file: the bytes it keeps, the merged chunk (none for no text), what follows. */
export function mergedFile(head: Buffer, chunk: Buffer | '', after?: Buffer): Buffer {
  const parts = [head];
  if (chunk) parts.push(chunk);
  if (after && after.length > 0) parts.push(after);
  return Buffer.concat(parts);
}

/**
 * Bytes of the stored (uncompressed) chunks that end the file: what merging them would
 * compress. `undefined` when the file is not format 4 or holds bytes that are no whole
 * chunk. Pure.
 */
export function storedTailBytes(buf: Buffer): number | undefined {
  const spans = chunkSpans(buf);
  if (!spans) return undefined;
  let bytes = 0;
  for (let i = spans.length - 1; i >= 0; i--) {
    const span = spans[i]!;
    // A cut counts as stored: it is merged (and the file rewritten) with them.
    if (!span.cut && (span.brotli || storedData(packedOf(buf, span)) === undefined)) break;
    bytes += span.end - span.start;
  }
  return bytes;
}

/** Every chunk of a format-4 file, checked; `undefined` if some bytes are no whole chunk. */
function chunkSpans(buf: Buffer): ChunkSpan[] | undefined {
  if (!isChunkedSearch(buf)) return undefined;
  const spans: ChunkSpan[] = [];
  for (let pos = SEARCH_MAGIC.length; pos < buf.length; ) {
    const span = checkedChunkAt(buf, pos);
    if (!span) return undefined;
    spans.push(span);
    pos = span.end;
  }
  return spans;
}

/** The deflated bytes of a chunk. */
function packedOf(buf: Buffer, span: ChunkSpan): Buffer {
  return buf.subarray(span.start + CHUNK_HEAD, span.end);
}

/** The whole chunk starting at `pos` whose checksum holds, undecoded; or `undefined`. */
function checkedChunkAt(buf: Buffer, pos: number): ChunkSpan | undefined {
  const mark = buf[pos];
  const known = mark === CHUNK_MARK || mark === BROTLI_MARK || mark === CUT_MARK;
  if (!known || pos + CHUNK_HEAD > buf.length) return undefined;
  const end = pos + CHUNK_HEAD + buf.readUInt32LE(pos + 1);
  if (end > buf.length || (mark === CUT_MARK && end - pos !== CHUNK_HEAD + 4)) return undefined;
  if (crc32(buf.subarray(pos + CHUNK_HEAD, end)) !== buf.readUInt32LE(pos + 5)) return undefined;
  return { start: pos, end, brotli: mark === BROTLI_MARK, cut: mark === CUT_MARK };
}

/** The text of a checksummed chunk, or `undefined` when it does not inflate. */
function inflateChunk(buf: Buffer, span: ChunkSpan): string | undefined {
  const packed = packedOf(buf, span);
  const stored = span.brotli ? undefined : storedData(packed);
  return stored ? stored.toString('utf8') : unpack(packed, span.brotli);
}

/** Compressed bytes (Brotli, or raw deflate) as text, or `undefined` when they do not unpack. */
function unpack(packed: Buffer, brotli: boolean): string | undefined {
  try {
    return (brotli ? brotliDecompressSync(packed) : inflateRawSync(packed)).toString('utf8');
  } catch {
    return undefined;
  }
}
