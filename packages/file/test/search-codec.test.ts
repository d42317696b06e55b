// The format-4 search file (format/search-codec.ts): compressed chunks that concatenate to
// the search text; a torn or damaged chunk loses only its own text.
import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  decodeSearchFile,
  encodeCutChunk,
  encodeSearchChunk,
  encodeSearchFile,
  encodeStoredChunk,
  mergeNewestChunks,
  SEARCH_MAGIC,
  storedTailBytes,
} from '../src/format/search-codec.js';

describe('search codec', () => {
  it('a cut drops the end of the text before it; a merge meeting one rewrites the file', () => {
    const file = Buffer.concat([
      encodeSearchFile('Aone'),
      encodeStoredChunk('AtwoAthree'),
      encodeCutChunk('Athree'.length),
      encodeStoredChunk('Afour'),
      encodeCutChunk(99), // past the start: everything before it goes
      encodeStoredChunk('Afive'),
    ]);
    expect(decodeSearchFile(file)).toEqual({ text: 'Afive', chunks: 6, damaged: false });
    const short = Buffer.concat([encodeSearchFile('AoneAtwo'), encodeCutChunk(4)]);
    expect(decodeSearchFile(short).text).toBe('Aone');
    expect(storedTailBytes(short)).toBe(13);
    const merged = mergeNewestChunks(short, 1);
    expect(merged && decodeSearchFile(merged)).toEqual({ text: 'Aone', chunks: 1, damaged: false });
    // A cut whose checksum fails is damage: skipped, the rest still read.
    const bad = Buffer.concat([encodeSearchFile('Aone'), encodeCutChunk(2)]);
    bad[bad.length - 1]! ^= 0xff;
    expect(decodeSearchFile(bad)).toMatchObject({ text: 'Aone', damaged: true });
  });

  it('chunks concatenate to the text; plain (format 3) files read as they are', () => {
    const file = Buffer.concat([encodeSearchFile('Aone'), encodeSearchChunk('Atwo')]);
    expect(decodeSearchFile(file)).toEqual({ text: 'AoneAtwo', chunks: 2, damaged: false });
    expect(decodeSearchFile(Buffer.from('Aplain text'))).toMatchObject({ text: 'Aplain text' });
    expect(decodeSearchFile(encodeSearchFile(''))).toEqual({ text: '', chunks: 0, damaged: false });
  });

  it('skips a torn or damaged chunk and reads on', () => {
    const a = encodeSearchChunk('Aalpha');
    const b = encodeSearchChunk('Abeta');
    const c = encodeSearchChunk('Agamma');
    const torn = Buffer.concat([SEARCH_MAGIC, a, b.subarray(0, 5), c]);
    expect(decodeSearchFile(torn)).toEqual({ text: 'AalphaAgamma', chunks: 2, damaged: true });
    const flipped = Buffer.from(b);
    flipped.writeUInt8(flipped.readUInt8(flipped.length - 1) ^ 0xff, flipped.length - 1);
    const damaged = Buffer.concat([SEARCH_MAGIC, a, flipped, c]);
    expect(decodeSearchFile(damaged)).toEqual({ text: 'AalphaAgamma', chunks: 2, damaged: true });
  });

  it('compresses prose to well under its size', () => {
    const text = `A${'the quick brown fox jumps over the lazy dog and then some '.repeat(40)}`;
    expect(encodeSearchFile(text).length).toBeLessThan(text.length / 3);
  });

  it('a compaction merges the newest small chunks and keeps older large ones byte for byte', () => {
    const big = encodeSearchChunk(`A${'large merged text '.repeat(20)}`);
    expect(big.length - 9).toBeGreaterThan(20); // packed bytes over the limit below
    const small = ['Aone', 'Atwo', 'Athree'].map((t) => encodeSearchChunk(t));
    const file = Buffer.concat([SEARCH_MAGIC, big, ...small]);
    const merged = mergeNewestChunks(file, 20);
    expect(merged).toBeDefined();
    expect(merged!.subarray(0, SEARCH_MAGIC.length + big.length)).toEqual(
      Buffer.concat([SEARCH_MAGIC, big]),
    );
    expect(decodeSearchFile(merged!)).toEqual({
      text: decodeSearchFile(file).text,
      chunks: 2,
      damaged: false,
    });
    // A limit above every chunk merges them all; the merged file then has nothing to merge.
    const all = mergeNewestChunks(file, 1 << 20)!;
    expect(decodeSearchFile(all)).toMatchObject({ text: decodeSearchFile(file).text, chunks: 1 });
    expect(mergeNewestChunks(all, 1 << 20)).toBeUndefined();
    // One small chunk after a large one: nothing to merge.
    expect(mergeNewestChunks(Buffer.concat([SEARCH_MAGIC, big, small[0]!]), 20)).toBeUndefined();
  });

  it('a compaction leaves damaged and plain files alone', () => {
    const [a, b] = ['Aalpha', 'Abeta'].map((t) => encodeSearchChunk(t));
    const damaged = Buffer.concat([SEARCH_MAGIC, a!, b!]);
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 1) ^ 0xff, damaged.length - 1);
    expect(mergeNewestChunks(damaged, 1 << 20)).toBeUndefined();
    const torn = Buffer.concat([SEARCH_MAGIC, a!, b!.subarray(0, 5)]);
    expect(mergeNewestChunks(torn, 1 << 20)).toBeUndefined();
    expect(mergeNewestChunks(Buffer.from('Aplain Atext'), 1 << 20)).toBeUndefined();
  });

  it('a stored chunk is raw deflate any inflater reads, in blocks of at most 65,535 bytes', () => {
    const long = `A${'ünïcödé text '.repeat(12_000)}`; // > 65,535 bytes: several blocks
    for (const text of ['Aone', long]) {
      const chunk = encodeStoredChunk(text);
      expect(inflateRawSync(chunk.subarray(9)).toString('utf8')).toBe(text);
      expect(decodeSearchFile(Buffer.concat([SEARCH_MAGIC, chunk])).text).toBe(text);
    }
    const bytes = Buffer.byteLength(long);
    expect(encodeStoredChunk(long).length).toBe(9 + bytes + 5 * Math.ceil(bytes / 0xffff));
  });

  it('counts the stored chunks that end a file, and merges them even alone', () => {
    const packed = encodeSearchChunk(`A${'compressed text '.repeat(30)}`);
    const stored = ['Atwo', 'Athree'].map((t) => encodeStoredChunk(t));
    const file = Buffer.concat([SEARCH_MAGIC, encodeStoredChunk('Aold'), packed, ...stored]);
    expect(storedTailBytes(file)).toBe(stored[0]!.length + stored[1]!.length);
    expect(storedTailBytes(Buffer.concat([SEARCH_MAGIC, packed]))).toBe(0);
    expect(storedTailBytes(Buffer.from('Aplain'))).toBeUndefined();
    expect(storedTailBytes(Buffer.concat([SEARCH_MAGIC, stored[0]!.subarray(0, 6)]))).toBe(
      undefined,
    );
    // The compressed chunk (over the limit) and the older stored one before it stay; the
    // two newest become one compressed chunk.
    const merged = mergeNewestChunks(file, 20)!;
    expect(merged.subarray(0, file.length - stored[0]!.length - stored[1]!.length)).toEqual(
      file.subarray(0, file.length - stored[0]!.length - stored[1]!.length),
    );
    expect(storedTailBytes(merged)).toBe(0);
    expect(decodeSearchFile(merged)).toMatchObject({
      text: decodeSearchFile(file).text,
      chunks: 3,
    });
    const lone = Buffer.concat([SEARCH_MAGIC, encodeStoredChunk('Asolo')]);
    expect(decodeSearchFile(mergeNewestChunks(lone, 20)!).text).toBe('Asolo');
    expect(storedTailBytes(mergeNewestChunks(lone, 20)!)).toBe(0);
  });
});
