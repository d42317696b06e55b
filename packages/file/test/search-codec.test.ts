// The format-4 search file (format/search-codec.ts): compressed chunks that concatenate to
// the search text; a torn or damaged chunk loses only its own text.
import { describe, expect, it } from 'vitest';
import {
  decodeSearchFile,
  encodeSearchChunk,
  encodeSearchFile,
  mergeNewestChunks,
  SEARCH_MAGIC,
} from '../src/format/search-codec.js';

describe('search codec', () => {
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
});
