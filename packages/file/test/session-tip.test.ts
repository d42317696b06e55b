// Session tips (session/tip.ts): a writer's cached tip is never trusted across inode reuse.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { FileStore } from '../src/index.js';
import { KEPT_FILES } from '../src/io/kept-files.js';
import { storeFolderFixture } from './helpers.js';

// The stores here keep at most 64 descriptors (the real bound is thousands), so a few
// dozen sessions evict one.
vi.mock('../src/io/kept-files.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/io/kept-files.js')>();
  class SmallKeptFiles extends real.KeptFiles {
    constructor() {
      super(64);
    }
  }
  return { ...real, KEPT_FILES: 64, KeptFiles: SmallKeptFiles };
});

const fixture = storeFolderFixture();

describe('cached tips survive no inode reuse', () => {
  // A session deleted and re-created by another process can get the old files' inode
  // numbers (ext4 reuses them). Writing the new incarnation's bytes into the old inodes
  // is exactly what that looks like to `stat`.
  async function incarnation(id: string, title: string, owner: string, withLog: boolean) {
    const other = join(fixture.root, `other-${title}`);
    const c = new FileStore({ dir: other });
    await c.create({ id, title, metadata: { owner } });
    if (withLog) await c.commit(id, { append: [{ role: 'user', content: title.slice(0, 1) }] });
    await c.close();
    return join(other, 'sessions', id);
  }

  it('a writer whose log descriptor was evicted re-reads a re-created session', async () => {
    // Without a lease (`leaseMs: 0`): a store holding the session's lease would have been
    // asked for it (and have dropped its cached tip) before any process could re-create it;
    // this is the path of a writer whose lease was released.
    const a = fixture.open({ leaseMs: 0, sync: false });
    await a.create({ id: 'x', title: 'OLD', metadata: { owner: 'alice' } });
    await a.commit('x', { append: [{ role: 'user', content: 'O' }] });
    for (let i = 0; i < KEPT_FILES + 2; i++) {
      await a.create({ id: `o${i}` });
      await a.commit(`o${i}`, { append: [] }); // evicts x's kept descriptors
    }
    const fresh = await incarnation('x', 'NEW', 'carol', true);
    const mine = join(fixture.dir, 'sessions', 'x');
    expect(statSync(join(fresh, 'log-1.skr')).size).toBe(statSync(join(mine, 'log-1.skr')).size);
    for (const name of ['snap-1.skr', 'log-1.skr']) {
      const ino = statSync(join(mine, name)).ino;
      writeFileSync(join(mine, name), readFileSync(join(fresh, name))); // same inode
      expect(statSync(join(mine, name)).ino).toBe(ino);
    }
    await a.commit('x', { append: [{ role: 'user', content: 'c' }] });
    const s = await fixture.open().load('x');
    expect([s.title, s.metadata.owner, s.messages]).toEqual([
      'NEW',
      'carol',
      [
        { role: 'user', content: 'N' },
        { role: 'user', content: 'c' },
      ],
    ]);
  });

  it('a writer re-reads the snapshot of a session that has no log yet', async () => {
    const a = fixture.open();
    await a.create({ id: 'y', title: 'OLD', metadata: { owner: 'alice' } });
    const fresh = await incarnation('y', 'NEW', 'carol', false);
    const path = join(fixture.dir, 'sessions', 'y', 'snap-1.skr');
    writeFileSync(path, readFileSync(join(fresh, 'snap-1.skr'))); // same inode
    await a.commit('y', { append: [{ role: 'user', content: 'c' }] });
    const s = await fixture.open().load('y');
    expect([s.title, s.metadata.owner]).toEqual(['NEW', 'carol']);
  });
});
