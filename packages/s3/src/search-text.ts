// Search-text objects (`t/N`, `ft/N`): the lower-cased text of each message a version or a
// fold wrote, which `list({ query })` reads instead of transcripts. They were as large as
// the messages themselves (issue 31: bytes per message); they are now brotli-compressed
// behind a one-line marker, and the uncompressed JSON of earlier releases still reads.
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import type { ObjectIO } from './objects.js';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/**
 * The first line of a compressed search-text object: format 3, brotli. Not JSON (`{`), so
 * a reader tells it from the JSON objects of format 1 and 2 by its first byte; a reader of
 * an earlier release finds it unreadable and rebuilds the text from the messages (it
 * rebuilds every unreadable text), so a bucket shared with older writers stays searchable.
 */
const MARKER = 'sktext:3:br\n';
const MARKER_BYTES = Buffer.from(MARKER, 'latin1');

/**
 * Brotli, text mode, quality 5 up to 1 MB of JSON: measured on 400 ~1 KB texts (400 KB),
 * 0.22–0.27 of the size on real prose and code in 7–12 ms, against 0.24–0.30 for deflate
 * at the same CPU; quality 11 (the default) saves another 10 % for 50–70× the time, far
 * too slow for a fold. A two-message version text takes about 0.1 ms. Above 1 MB (the
 * fold of a long session) quality 3: about 80 MB/s against 38, for 0.265 against 0.226
 * on 3.6 MB of the same text, so a fold of 10,000 messages costs ~130 ms, not ~260.
 */
const LARGE_TEXT_BYTES = 1 << 20;
const brotliOptions = (size: number) => ({
  params: {
    [constants.BROTLI_PARAM_QUALITY]: size > LARGE_TEXT_BYTES ? 3 : 5,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_SIZE_HINT]: size,
  },
});

/** The bytes of a search-text object holding `texts` (format 3: marker, then brotli). */
export async function encodeSearchTexts(texts: string[]): Promise<Uint8Array> {
  const json = Buffer.from(JSON.stringify(texts), 'utf8');
  // Asynchronous: a fold's text of a long session is megabytes, compressed off the loop.
  const packed = await compress(json, brotliOptions(json.length));
  return Buffer.concat([MARKER_BYTES, packed]);
}

/** The previous releases' format: `{"format":2,"texts":[…]}` (format 1 is rebuilt). */
const JSON_TEXT_FORMAT = 2;

const allStrings = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((t) => typeof t === 'string');

/**
 * The per-message texts of a search-text object, or `undefined` when it must be rebuilt
 * from the messages: unreadable, of an unknown format, or of format 1 (one string for all
 * of a version's messages, written with a narrower reading of message text).
 */
export async function decodeSearchTexts(bytes: Uint8Array): Promise<string[] | undefined> {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  try {
    if (body.subarray(0, MARKER_BYTES.length).equals(MARKER_BYTES)) {
      const json = await decompress(body.subarray(MARKER_BYTES.length));
      const texts: unknown = JSON.parse(json.toString('utf8'));
      return allStrings(texts) ? texts : undefined;
    }
    const raw = JSON.parse(body.toString('utf8')) as { format?: unknown; texts?: unknown };
    if (raw.format !== JSON_TEXT_FORMAT) return undefined;
    return allStrings(raw.texts) ? raw.texts : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The texts stored at `key`, or `undefined` when there is no object or it must be rebuilt
 * (see `decodeSearchTexts`). Throws `unavailable`.
 */
export async function readSearchTextObject(
  io: ObjectIO,
  key: string,
  doing: string,
): Promise<string[] | undefined> {
  const bytes = await io.getBytes(key, doing);
  return bytes === undefined ? undefined : decodeSearchTexts(bytes);
}

/** Writes `texts` at `key` (unconditionally: a text object is derived data). */
export async function writeSearchTextObject(
  io: ObjectIO,
  key: string,
  texts: string[] | Uint8Array,
  doing: string,
): Promise<void> {
  await io.putPlain(key, Array.isArray(texts) ? await encodeSearchTexts(texts) : texts, doing);
}
