import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '@sessionkit/core';
import { searchTextOf } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { decodeSearchFile, storedTailBytes } from '../src/format/search-codec.js';
import { FileStore } from '../src/index.js';
import { msg, tempFolders } from './helpers.js';

const freshDir = tempFolders().storeDir;

describe('search', () => {
  it('matches within one message, never across two (also after appends)', async () => {
    const s = new FileStore({ dir: freshDir() });
    await s.create({ id: 'q', messages: [msg('Hello one'), msg('two')] });
    await s.commit('q', {
      append: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'three' },
            { type: 'text', text: 'four' },
          ],
        },
      ],
    });
    await s.commit('q', { append: [msg('five')] });
    const ids = async (query: string) => (await s.list({ query })).map((x) => x.id);
    expect(await ids('one\ntwo')).toEqual([]);
    expect(await ids('onetwo')).toEqual([]);
    expect(await ids('fourfive')).toEqual([]);
    expect(await ids('four\nfive')).toEqual([]);
    expect(await ids('three\nfour')).toEqual(['q']); // parts of one message
    expect(await ids('hello one')).toEqual(['q']);
    await s.close();
  });

  it('keeps the uncompressed turns at the end of the search file bounded, across stores', async () => {
    const dir = freshDir();
    const file = join(dir, 'sessions', 'long', 'search.txt');
    const turn = (i: number): Message[] => [
      msg(`Question ${i}: how does the ${i % 7} cache behave under load?`),
      {
        role: 'assistant',
        content: `Answer ${i}: ${'it evicts the oldest entries first. '.repeat(8)}`,
      },
    ];
    const all: Message[] = [];
    // No fold in the way (snapshotEvery): merges alone keep the file compressed.
    let s = new FileStore({ dir, snapshotEvery: 100_000 });
    await s.create({ id: 'long' });
    for (let i = 0; i < 150; i++) {
      if (i === 75) {
        // A new store knows nothing of the file: it reads its stored tail once.
        await s.close();
        s = new FileStore({ dir, snapshotEvery: 100_000 });
      }
      all.push(...turn(i));
      await s.commit('long', { append: turn(i) });
      const buf = readFileSync(file);
      const tail = storedTailBytes(buf)!;
      // At most one merge threshold (4 KiB, or a quarter of the rest) plus one turn.
      expect(tail).toBeLessThanOrEqual(Math.max(4096, (buf.length - tail) / 4) + 1024);
    }
    const decoded = decodeSearchFile(readFileSync(file));
    expect(decoded).toMatchObject({ text: searchTextOf(all), damaged: false });
    expect(decoded.chunks).toBeLessThan(40);
    expect(readFileSync(file).length).toBeLessThan(Buffer.byteLength(searchTextOf(all)) / 2);
    expect((await s.list({ query: 'question 0: how' })).map((e) => e.id)).toEqual(['long']);
    expect((await s.list({ query: 'answer 149: it evicts' })).map((e) => e.id)).toEqual(['long']);
    await s.close();
  });

  it('a damaged search file is appended to but not merged; repair rewrites it', async () => {
    const dir = freshDir();
    const file = join(dir, 'sessions', 'd', 'search.txt');
    const s = new FileStore({ dir, snapshotEvery: 100_000 });
    await s.create({ id: 'd' });
    await s.commit('d', { append: [msg('first turn')] });
    await s.close();
    writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from('Zjunk')]));
    const t = new FileStore({ dir, snapshotEvery: 100_000 });
    for (let i = 0; i < 40; i++)
      await t.commit('d', { append: [msg(`later ${i} ${'x'.repeat(300)}`)] });
    const decoded = decodeSearchFile(readFileSync(file));
    expect(decoded.damaged).toBe(true);
    expect(decoded.text).toContain('first turn');
    expect(decoded.text).toContain('later 39');
    expect((await t.list({ query: 'later 39' })).map((e) => e.id)).toEqual(['d']);
    await t.repair();
    expect(decodeSearchFile(readFileSync(file)).damaged).toBe(false);
    await t.close();
  });
});
