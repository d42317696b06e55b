// `enforceMax` (listing/prune.ts): candidates from the index, each re-checked under its lock.
import { statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { withFileLock } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { codeOf, storeFolderFixture } from './helpers.js';

const fixture = storeFolderFixture();

describe('enforceMax re-checks each candidate under its lock', () => {
  it('keeps a candidate that was committed to between selection and removal', async () => {
    const a = fixture.open();
    const b = fixture.open();
    for (const id of ['a', 'b', 'c']) {
      await a.create({ id });
      await new Promise((r) => setTimeout(r, 2));
    }
    // Hold b's lock: the pruner selects [b, a] (newest first) and then waits on b.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const holder = withFileLock(join(fixture.dir, 'locks', 'b.lock'), async () => {
      locked();
      await held;
    });
    await isLocked;
    const pruning = a.enforceMax(1);
    await new Promise((r) => setTimeout(r, 300)); // let it select its candidates
    // A turn lands on `a` after the selection: `a` is no longer the pruned state.
    await b.commit('a', { append: [{ role: 'user', content: 'important' }] });
    release();
    await holder;
    expect(await pruning).toBe(1);
    expect((await b.loadMessages('a')).length).toBe(1);
    expect(await codeOf(b.load('b'))).toBe('not_found');
    expect((await b.list()).map((s) => s.id).sort()).toEqual(['a', 'c']);
  });

  it('skips a candidate whose tip under the lock is not the index entry it was chosen by', async () => {
    const a = fixture.open();
    await a.create({ id: 'p' });
    await a.create({ id: 'q' });
    await a.create({ id: 'r' });
    // `p` is a pruning candidate (oldest fixture.root); the index entry the pruner sees is
    // replaced by one that is stale on purpose: the tip under the lock decides.
    const index = join(fixture.dir, 'index.log');
    const before = statSync(index).size;
    await a.commit('p', { append: [] });
    truncateSync(index, before);
    expect(await a.enforceMax(2)).toBe(0); // p changed (revision 2): skipped
    expect((await a.list()).map((s) => s.id).sort()).toEqual(['p', 'q', 'r']);
  });
});
