import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '@sessionkit/core';
import { searchTextOf } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { decodeSearchFile, storedTailBytes } from '../src/format/search-codec.js';
import { FileStore } from '../src/index.js';
import { MERGE_FROM_BYTES } from '../src/search/search-file.js';
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

  it('compresses a due merge off the commit path; the next commit puts it in place', async () => {
    const dir = freshDir();
    const file = join(dir, 'sessions', 'm', 'search.txt');
    const turn = (i: number): Message[] => [
      msg(`Question ${i}: ${randomBytes(300).toString('hex')}`),
      { role: 'assistant', content: `Answer ${i}: ${randomBytes(300).toString('hex')}` },
    ];
    const all: Message[] = [];
    const commit = async (s: FileStore) => {
      all.push(...turn(all.length));
      await s.commit('m', { append: all.slice(-2) });
      return storedTailBytes(readFileSync(file))!;
    };
    const text = () => decodeSearchFile(readFileSync(file));
    let s = new FileStore({ dir, snapshotEvery: 100_000 });
    await s.create({ id: 'm' });
    // The commit that makes the merge due resolves with the stored turns still in the file.
    let tail = 0;
    for (let i = 0; i < 200 && tail < MERGE_FROM_BYTES; i++) tail = await commit(s);
    expect(tail).toBeGreaterThanOrEqual(MERGE_FROM_BYTES);
    // The next one puts the merge in place before its own turn.
    const next = await commit(s);
    expect(next).toBeLessThan(2000);
    expect(text()).toMatchObject({ text: searchTextOf(all), damaged: false, chunks: 2 });
    // Due again, then another store writes the session: the merge planned under the first
    // lease is dropped, never put over that store's turn, and planned again.
    for (let i = 0; i < 200 && tail - next < MERGE_FROM_BYTES; i++) tail = await commit(s);
    const other = new FileStore({ dir, snapshotEvery: 100_000 });
    await commit(other);
    await other.close();
    await commit(s);
    expect(text()).toMatchObject({ text: searchTextOf(all), damaged: false });
    // A store closed with a merge waiting leaves the file whole; the next store merges it.
    for (let i = 0; i < 200 && (await commit(s)) > 1500; i++);
    for (let i = 0; i < 200 && tail < MERGE_FROM_BYTES; i++) tail = await commit(s);
    await s.close();
    expect(text()).toMatchObject({ text: searchTextOf(all), damaged: false });
    s = new FileStore({ dir, snapshotEvery: 100_000 });
    await commit(s);
    expect(await commit(s)).toBeLessThan(2000);
    expect(text()).toMatchObject({ text: searchTextOf(all), damaged: false });
    const [first, last] = [all[0]!.content as string, all[all.length - 1]!.content as string];
    expect((await s.list({ query: first.slice(0, 60) })).map((e) => e.id)).toEqual(['m']);
    expect((await s.list({ query: last.slice(-60) })).map((e) => e.id)).toEqual(['m']);
    await s.close();
  });

  it('keeps the uncompressed turns at the end of the search file bounded, across stores', async () => {
    const dir = freshDir();
    const file = join(dir, 'sessions', 'long', 'search.txt');
    // Hex compresses to about half: the file passes 64 KiB, where turns are stored.
    const turn = (i: number): Message[] => [
      msg(`Question ${i}: what is ${randomBytes(300).toString('hex')}?`),
      { role: 'assistant', content: `Answer ${i}: ${randomBytes(300).toString('hex')}` },
    ];
    const all: Message[] = [];
    let storedSeen = 0;
    let readsAfterReopen = -1;
    // No fold in the way (snapshotEvery): merges alone keep the file compressed.
    let s = new FileStore({ dir, snapshotEvery: 100_000 });
    await s.create({ id: 'long' });
    for (let i = 0; i < 200; i++) {
      if (i === 150) {
        // A new store knows nothing of the file: it reads its stored tail once.
        await s.close();
        s = new FileStore({ dir, snapshotEvery: 100_000 });
      }
      all.push(...turn(i));
      await s.commit('long', { append: all.slice(-2) });
      if (i === 150) readsAfterReopen = s.stats.transcriptReads;
      const buf = readFileSync(file);
      const tail = storedTailBytes(buf)!;
      if (tail > 0) storedSeen++;
      // At most a quarter of the rest of the file (or the least a merge takes), plus the
      // turn that reached it.
      expect(tail).toBeLessThanOrEqual(Math.max(MERGE_FROM_BYTES, (buf.length - tail) / 4) + 1400);
    }
    expect(storedSeen).toBeGreaterThan(20);
    const decoded = decodeSearchFile(readFileSync(file));
    expect(decoded).toMatchObject({ text: searchTextOf(all), damaged: false });
    expect(decoded.chunks).toBeLessThan(150);
    expect(readFileSync(file).length).toBeLessThan(Buffer.byteLength(searchTextOf(all)) * 0.7);
    const [first, last] = [all[0]!.content as string, all[all.length - 1]!.content as string];
    expect((await s.list({ query: first.slice(0, 60) })).map((e) => e.id)).toEqual(['long']);
    expect((await s.list({ query: last.slice(-60) })).map((e) => e.id)).toEqual(['long']);
    // After the second store's first write (which checks the log's last record), its
    // appends, merges and queries read no transcript (DESIGN: search never loads bodies).
    expect(s.stats.transcriptReads).toBe(readsAfterReopen);
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
