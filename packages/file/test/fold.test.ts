// Folding the commit log into a new snapshot (session/fold.ts): when it is due, and that a
// splice of the stored bytes gives exactly the transcript a full load builds.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '@sessionkit/core';
import { searchTextOf } from '@sessionkit/core/adapter';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeSearchFile } from '../src/format/search-codec.js';
import { FileStore } from '../src/index.js';
import { spliceFold } from '../src/session/fold.js';
import { snapshotsOf, tempDir } from './helpers.js';

let root: string;
beforeEach(() => {
  root = tempDir();
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('folding the log into a snapshot', () => {
  it('splices through truncations: the kept prefix of the bytes, exactly what a load builds', async () => {
    const dir = join(root, 'cut');
    const store = new FileStore({ dir, snapshotEvery: 1_000_000 });
    try {
      const m = (i: number) => ({ role: 'user', content: `m${i} "x" ]` }) as Message;
      await store.create({ id: 'c', messages: [m(0), m(1), m(2), m(3)] });
      await store.commit('c', { append: [m(4), m(5)] });
      await store.commit('c', { truncate: 5, append: [m(6)] }); // cuts the record before
      await store.commit('c', { truncate: 2 }); // into the snapshot
      await store.commit('c', { append: [m(7), m(8)] });
      await store.commit('c', { truncate: 3, append: [m(9)] }); // inside a record
      const expected = [m(0), m(1), m(7), m(9)];
      expect((await store.load('c')).messages).toEqual(expected);
      const snap = readFileSync(snapshotsOf(dir, 'c')[0]!);
      const logName = readdirSync(join(dir, 'sessions', 'c')).find((n) => n.startsWith('log-'))!;
      const log = readFileSync(join(dir, 'sessions', 'c', logName));
      const spliced = spliceFold('c', snap, log, {
        logSize: log.length,
        logRecords: 5,
        messageCount: 4,
      });
      expect(spliced?.tabled.count).toBe(4);
      expect(JSON.parse(spliced!.tabled.body.toString('utf8'))).toEqual(expected);
      // Every message's offset and CRC in the new table: a window reads them back.
      const folded = new FileStore({ dir, snapshotEvery: 1 });
      await folded.commit('c', { truncate: 4, append: [m(10)] });
      expect(snapshotsOf(dir, 'c')).toEqual([expect.stringMatching(/snap-7\.skr$/)]);
      const reader = new FileStore({ dir });
      expect(await reader.loadMessages('c', { offset: 1, limit: 3 })).toEqual([m(1), m(7), m(9)]);
      expect(await reader.loadMessages('c')).toEqual([...expected, m(10)]);
      await reader.close();
      await folded.close();
    } finally {
      await store.close();
    }
  });

  it('splices stored bytes into exactly the transcript a full load builds', async () => {
    const store = new FileStore({ dir: join(root, 'fold'), snapshotEvery: 3 });
    try {
      await store.create({ id: 'f' }); // an empty snapshot: `[]`
      const expected: unknown[] = [];
      for (let i = 0; i < 40; i++) {
        if (i % 4 === 3) {
          // A record without messages (empty body) between appends.
          await store.commit('f', { patch: { title: `t${i}` }, increment: { turnCount: 1 } });
          continue;
        }
        const batch = [
          { role: 'user', content: `[${i}] "quoted" ]], {not: json} — ünïcødé 🎉` },
          { role: 'assistant', content: [{ type: 'text', text: `a${i}` }], extra: { n: i } },
        ];
        expected.push(...batch);
        await store.commit('f', { append: batch as Message[] });
      }
      expect(snapshotsOf(join(root, 'fold'), 'f')).toHaveLength(1);
      const reader = new FileStore({ dir: join(root, 'fold') });
      const loaded = await reader.load('f');
      expect(loaded.messages).toEqual(expected);
      expect(loaded.title).toBe('t39');
      expect(loaded.turnCount).toBe(10);
      await reader.close();
    } finally {
      await store.close();
    }
  });

  it('folds the log into a snapshot so a load replays a bounded tail', async () => {
    const dir = join(root, 's');
    const store = new FileStore({ dir, snapshotEvery: 4 });
    await store.create({ id: 'f' });
    for (let i = 0; i < 25; i++)
      await store.commit('f', { append: [{ role: 'user', content: `m${i}` }] });
    const files = readdirSync(join(dir, 'sessions', 'f'));
    const snaps = files.filter((f) => f.startsWith('snap-'));
    const logs = files.filter((f) => f.startsWith('log-'));
    expect(snaps).toHaveLength(1); // older snapshots are removed once a new one is durable
    expect(logs.length).toBeLessThanOrEqual(1);
    expect(Number(snaps[0]!.slice(5, -4))).toBeGreaterThan(1);
    expect((await store.loadMessages('f')).map((m) => (m as { content: string }).content)).toEqual(
      Array.from({ length: 25 }, (_, i) => `m${i}`),
    );
    await store.close();
  });

  it('a fold stores the search text as one chunk, equal to the text of every message', async () => {
    const dir = join(root, 'compact');
    const store = new FileStore({ dir, snapshotEvery: 3 });
    await store.create({ id: 'c' });
    const messages: Message[] = [];
    for (let i = 0; i < 12; i++) {
      const batch: Message[] = [
        { role: 'user', content: `Question ${i} ÜBER straße` },
        { role: 'assistant', content: `answer-${i}` },
      ];
      messages.push(...batch);
      await store.commit('c', { append: batch });
    }
    const file = readFileSync(join(dir, 'sessions', 'c', 'search.txt'));
    const decoded = decodeSearchFile(file);
    // Folds happened (one snapshot left, its log shorter than the history), and the last
    // one merged the per-turn chunks: fewer chunks than turns, the same text.
    expect(snapshotsOf(dir, 'c')).toHaveLength(1);
    expect(decoded.chunks).toBeLessThan(12);
    expect(decoded.damaged).toBe(false);
    expect(decoded.text).toBe(searchTextOf(messages));
    expect((await store.list({ query: 'question 0 über' })).map((e) => e.id)).toEqual(['c']);
    expect((await store.list({ query: 'answer-11' })).map((e) => e.id)).toEqual(['c']);
    expect(await store.list({ query: 'answer-12' })).toEqual([]);
    await store.close();
  });
});
