// The format-4 search file (format/search-codec.ts): compressed chunks that concatenate to
// the search text; a torn or damaged chunk loses only its own text.
import { describe, expect, it } from 'vitest';
import {
  decodeSearchFile,
  encodeSearchChunk,
  encodeSearchFile,
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
});
