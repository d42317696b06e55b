// Session tips (session/tip.ts): a writer's cached tip is never trusted across inode reuse.
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { tempDir } from './helpers.js';

let root: string;
let dir: string;
const stores: FileStore[] = [];
function open(options: Omit<ConstructorParameters<typeof FileStore>[0] & object, 'dir'> = {}) {
  const s = new FileStore({ dir, ...options });
  stores.push(s);
  return s;
}
beforeEach(() => {
  root = tempDir('sk-file-regress-');
  dir = join(root, 'store');
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  rmSync(root, { recursive: true, force: true });
});

describe('cached tips survive no inode reuse', () => {
  // A session deleted and re-created by another process can get the old files' inode
  // numbers (ext4 reuses them). Writing the new incarnation's bytes into the old inodes
  // is exactly what that looks like to `stat`.
  async function incarnation(id: string, title: string, owner: string, withLog: boolean) {
    const other = join(root, `other-${title}`);
    const c = new FileStore({ dir: other });
    await c.create({ id, title, metadata: { owner } });
    if (withLog) await c.commit(id, { append: [{ role: 'user', content: title.slice(0, 1) }] });
    await c.close();
    return join(other, 'sessions', id);
  }

  it('a writer whose log descriptor was evicted re-reads a re-created session', async () => {
    const a = open();
    await a.create({ id: 'x', title: 'OLD', metadata: { owner: 'alice' } });
    await a.commit('x', { append: [{ role: 'user', content: 'O' }] });
    for (let i = 0; i < 40; i++) {
      await a.create({ id: `o${i}` });
      await a.commit(`o${i}`, { append: [] }); // evicts x's kept descriptors (32 at most)
    }
    const fresh = await incarnation('x', 'NEW', 'carol', true);
    const mine = join(dir, 'sessions', 'x');
    expect(statSync(join(fresh, 'log-1.skr')).size).toBe(statSync(join(mine, 'log-1.skr')).size);
    for (const name of ['snap-1.skr', 'log-1.skr']) {
      const ino = statSync(join(mine, name)).ino;
      writeFileSync(join(mine, name), readFileSync(join(fresh, name))); // same inode
      expect(statSync(join(mine, name)).ino).toBe(ino);
    }
    await a.commit('x', { append: [{ role: 'user', content: 'c' }] });
    const s = await open().load('x');
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
    const a = open();
    await a.create({ id: 'y', title: 'OLD', metadata: { owner: 'alice' } });
    const fresh = await incarnation('y', 'NEW', 'carol', false);
    const path = join(dir, 'sessions', 'y', 'snap-1.skr');
    writeFileSync(path, readFileSync(join(fresh, 'snap-1.skr'))); // same inode
    await a.commit('y', { append: [{ role: 'user', content: 'c' }] });
    const s = await open().load('y');
    expect([s.title, s.metadata.owner]).toEqual(['NEW', 'carol']);
  });
});
