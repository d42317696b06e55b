// A writer reuses what it knows between commits (the session's tip, kept append
// descriptors). These tests change the files under it the ways another process can — two
// stores over one folder share nothing in memory — and check that it notices every time.
import { linkSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '@sessionkit/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { snapshotsOf, tempDir } from './helpers.js';

const msg = (content: string): Message => ({ role: 'user', content });
const contents = (messages: unknown[]) => messages.map((m) => (m as Message).content);

let root: string;
let a: FileStore;
let b: FileStore;
beforeEach(() => {
  root = tempDir();
  a = new FileStore({ dir: join(root, 'store') });
  b = new FileStore({ dir: join(root, 'store') });
});
afterEach(async () => {
  await a.close();
  await b.close();
  rmSync(root, { recursive: true, force: true });
});

describe('writer caches across stores', () => {
  it('notices a newer snapshot whose writer died before removing the old files', async () => {
    await a.create({ id: 's' });
    await a.commit('s', { append: [msg('a1')] });
    await a.commit('s', { append: [msg('a2')] }); // `a` now holds a current cached tip
    const dir = join(root, 'store', 'sessions', 's');
    // Keep the old snapshot and log alive under other names (same inodes)...
    linkSync(join(dir, 'snap-1.skr'), join(root, 'old-snap'));
    linkSync(join(dir, 'log-1.skr'), join(root, 'old-log'));
    const replaced = await b.commit('s', { replace: [msg('b1')] });
    // ...and put them back, unchanged, as if `b` had died before removing them.
    linkSync(join(root, 'old-snap'), join(dir, 'snap-1.skr'));
    linkSync(join(root, 'old-log'), join(dir, 'log-1.skr'));
    expect(snapshotsOf(join(root, 'store'), 's')).toHaveLength(2);
    expect(statSync(join(dir, 'snap-1.skr')).mode & 0o200).toBe(0); // marked superseded

    const next = await a.commit('s', { append: [msg('a3')] });
    expect(next.revision).toBe(replaced.revision + 1);
    const reader = new FileStore({ dir: join(root, 'store') });
    expect(contents(await reader.loadMessages('s'))).toEqual(['b1', 'a3']);
    await reader.close();
    // The still-newest snapshot is never marked; the stale one goes at the next fold.
    expect(statSync(snapshotsOf(join(root, 'store'), 's').at(-1)!).mode & 0o777).toBe(0o600);
  });

  it('sees appends, folds, deletes and re-creates by another store', async () => {
    const small = new FileStore({ dir: join(root, 'store'), snapshotEvery: 2 });
    try {
      await a.create({ id: 's' });
      const expected: string[] = [];
      for (let i = 0; i < 30; i++) {
        const writer = [a, b, small][i % 3]!;
        const text = `m${i}`;
        expected.push(text);
        const r = await writer.commit('s', { append: [msg(text)] });
        expect(r.messageCount).toBe(expected.length);
      }
      expect(contents(await b.loadMessages('s'))).toEqual(expected);
      await b.delete('s');
      await b.create({ id: 's', messages: [msg('new')] });
      const r = await a.commit('s', { append: [msg('after')] });
      expect(r).toMatchObject({ revision: 2, messageCount: 2 });
      expect(contents(await small.loadMessages('s'))).toEqual(['new', 'after']);
    } finally {
      await small.close();
    }
  });

  it('close() during commits leaves their kept descriptors alone until they finish', async () => {
    await a.create({ id: 's' });
    await a.commit('s', { append: [msg('first')] }); // the log descriptor is now kept
    const pending = [a.commit('s', { append: [msg('second')] })];
    pending.push(a.commit('s', { append: [msg('third')] }));
    const settling = Promise.allSettled(pending); // handled before close() may reject them
    await a.close();
    const settled = await settling;
    const kept = settled.filter((r) => r.status === 'fulfilled').length;
    for (const r of settled)
      if (r.status === 'rejected') expect(String(r.reason)).toMatch(/closed/);
    expect(contents(await b.loadMessages('s'))).toEqual(
      ['first', 'second', 'third'].slice(0, 1 + kept),
    );
    await b.commit('s', { append: [msg('after')] });
    expect((await b.loadMessages('s')).length).toBe(2 + kept);
  });

  it('a writer does not trust a tip a reader took from a half-written record', async () => {
    await a.create({ id: 's' });
    await a.commit('s', { append: [msg('one')] });
    await a.commit('s', { append: [msg('two, never acknowledged')] });
    // A power loss left the last record's prefix, meta and tail but not its body, and the
    // writer's lock file behind.
    const log = join(root, 'store', 'sessions', 's', 'log-1.skr');
    const bytes = readFileSync(log);
    bytes[bytes.length - 8 - 6] = 0x21;
    writeFileSync(log, bytes);
    const lock = join(root, 'store', 'locks', 's.lock');
    writeFileSync(lock, '');
    utimesSync(lock, new Date(0), new Date(0));
    const c = new FileStore({ dir: join(root, 'store'), lockStaleMs: 100 });
    try {
      // Listing reads the tip of a session whose lock file is present (metas only).
      expect((await c.list())[0]).toMatchObject({ id: 's', messageCount: 2 });
      const r = await c.commit('s', { append: [msg('three')] });
      expect(r.messageCount).toBe(2);
      expect(contents(await b.loadMessages('s'))).toEqual(['one', 'three']);
    } finally {
      await c.close();
    }
  });

  it('appends search text to the file another store replaced, not to the old one', async () => {
    await a.create({ id: 's' });
    await a.commit('s', { append: [msg('alpha')] }); // `a` keeps the search file open
    const loaded = await b.load('s');
    await b.save({ ...loaded, messages: [msg('beta')] }); // replaces search.txt
    await a.commit('s', { append: [msg('gamma')] });
    for (const [query, hits] of [
      ['alpha', 0],
      ['beta', 1],
      ['gamma', 1],
    ] as const) {
      expect(await a.list({ query }), query).toHaveLength(hits);
      expect(await b.list({ query }), query).toHaveLength(hits);
    }
  });

  it('keeps listing right while another store compacts the index under its appends', async () => {
    const tiny = { dir: join(root, 'store'), indexSlackBytes: 0 };
    const c = new FileStore(tiny);
    const d = new FileStore(tiny);
    try {
      await c.create({ id: 'x' });
      await d.create({ id: 'y' });
      for (let i = 1; i <= 20; i++) {
        await c.commit('x', { append: [msg(`x${i}`)], patch: { title: `x ${i}` } });
        await d.commit('y', { append: [msg(`y${i}`)], patch: { title: `y ${i}` } });
      }
      const fresh = new FileStore({ dir: join(root, 'store') });
      const listed = await fresh.list();
      expect(listed.map((s) => [s.id, s.title, s.messageCount])).toEqual([
        ['y', 'y 20', 20],
        ['x', 'x 20', 20],
      ]);
      await fresh.close();
    } finally {
      await c.close();
      await d.close();
    }
  });
});
