// Search-text objects: compressed (format 3) behind a marker, and the uncompressed JSON of
// earlier releases still read; anything else is "rebuild" (`undefined`), never an error.
import { describe, expect, it } from 'vitest';
import { decodeSearchTexts, encodeSearchTexts } from '../src/search-text.js';

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

describe('search-text objects', () => {
  it('read back what was written, marked as format 3', async () => {
    for (const texts of [
      [],
      [''],
      ['hello', 'ünïcode ✓ 🍐', 'line\nbreak', '{"format":2}'],
      Array.from({ length: 300 }, (_, i) => `message ${i}: lorem ipsum dolor sit amet`),
    ]) {
      const bytes = await encodeSearchTexts(texts);
      expect(Buffer.from(bytes).subarray(0, 12).toString('latin1')).toBe('sktext:3:br\n');
      expect(await decodeSearchTexts(bytes)).toEqual(texts);
    }
  });

  it('read back a fold-sized text (over 1 MB, compressed at a lower quality)', async () => {
    const texts = Array.from({ length: 1200 }, (_, i) =>
      `${i} `.repeat(1 + (i % 7)).padEnd(1000, 'xyz'),
    );
    expect(JSON.stringify(texts).length).toBeGreaterThan(1 << 20);
    expect(await decodeSearchTexts(await encodeSearchTexts(texts))).toEqual(texts);
  });

  it('are smaller than the JSON of repetitive text', async () => {
    const texts = Array.from({ length: 100 }, (_, i) => `turn ${i} ${'lorem ipsum '.repeat(80)}`);
    const json = JSON.stringify({ format: 2, texts }).length;
    expect((await encodeSearchTexts(texts)).length).toBeLessThan(json / 20);
  });

  it('read the uncompressed JSON of format 2 (the previous releases) as it is', async () => {
    const texts = ['marmalade', 'ünïcode'];
    expect(await decodeSearchTexts(utf8(JSON.stringify({ format: 2, texts })))).toEqual(texts);
  });

  it('say "rebuild" for format 1, unknown formats and damaged objects', async () => {
    const good = Buffer.from(await encodeSearchTexts(['some text', 'more text']));
    const marker = Buffer.from('sktext:3:br\n', 'latin1');
    for (const bytes of [
      utf8(JSON.stringify({ format: 1, text: 'one string' })),
      utf8(JSON.stringify({ format: 4, texts: ['x'] })),
      utf8(JSON.stringify({ format: 2, texts: [1] })),
      utf8('{"format":2,"te'),
      utf8(''),
      utf8('sktext:4:zz\nwhatever'),
      good.subarray(0, good.length - 3),
      Buffer.concat([marker, Buffer.from('not brotli at all')]),
    ]) {
      expect(await decodeSearchTexts(bytes)).toBeUndefined();
    }
  });

  it('say "rebuild" for a compressed payload that is not a list of strings', async () => {
    const { brotliCompressSync } = await import('node:zlib');
    const marker = Buffer.from('sktext:3:br\n', 'latin1');
    for (const payload of ['{"texts":["a"]}', '["a",2]', 'not json']) {
      const bytes = Buffer.concat([marker, brotliCompressSync(Buffer.from(payload))]);
      expect(await decodeSearchTexts(bytes)).toBeUndefined();
    }
  });
});
