// The session lock (session/lock.ts): whoever takes a lock left by a writer killed between
// its data and its index record appends the session's index entry before removing it.
import { existsSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileStore } from '../src/index.js';
import { codeOf, deadLock, storeFolderFixture } from './helpers.js';

const fixture = storeFolderFixture();

/**
 * Session `x` at revision 2 whose writer was "killed" after its commit was durable and
 * before its index record: the index ends before that record and its lock file remains.
 */
async function crashedCommit(): Promise<void> {
  const w = fixture.open();
  await w.create({ id: 'x', title: 't' });
  const index = join(fixture.dir, 'index.log');
  const before = statSync(index).size;
  await w.commit('x', { append: [{ role: 'user', content: 'hello' }] });
  await w.close();
  truncateSync(index, before);
  deadLock(join(fixture.dir, 'locks', 'x.lock'));
}

describe('a writer killed between its data and its index record', () => {
  const ops: [string, (s: FileStore) => Promise<unknown>][] = [
    ['saveRuntimeStatus', (s) => s.saveRuntimeStatus('x', { busy: false })],
    ['append', (s) => s.append('x', 'ev', null)],
    ['a commit failing with conflict', (s) => s.commit('x', { expectedRevision: 1 })],
    ['a save failing with conflict', async (s) => s.save({ ...(await s.load('x')), revision: 1 })],
    ['branch', (s) => s.branch('x', 0)],
    ['create failing with exists', (s) => s.create({ id: 'x' })],
  ];
  for (const [name, op] of ops) {
    it(`${name} re-appends the index entry before removing the dead lock`, async () => {
      await crashedCommit();
      const t = fixture.open();
      expect((await t.list()).find((e) => e.id === 'x')?.revision).toBe(2);
      await codeOf(op(t));
      expect(existsSync(join(fixture.dir, 'locks', 'x.lock'))).toBe(false);
      const entry = (await t.list()).find((e) => e.id === 'x');
      expect([entry?.revision, entry?.messageCount]).toEqual([2, 1]);
      const fresh = fixture.open();
      const again = (await fresh.list()).find((e) => e.id === 'x');
      expect([again?.revision, again?.messageCount]).toEqual([2, 1]);
    });
  }

  it('a create killed before its index record: a retried create leaves it listed', async () => {
    const s = fixture.open();
    await s.list();
    const index = join(fixture.dir, 'index.log');
    const before = statSync(index).size;
    await s.create({ id: 'x', title: 't' });
    await s.close();
    truncateSync(index, before);
    deadLock(join(fixture.dir, 'locks', 'x.lock'));
    const t = fixture.open();
    expect(await codeOf(t.create({ id: 'x', title: 't' }))).toBe('exists');
    expect((await t.list()).map((e) => e.id)).toEqual(['x']);
  });
});
