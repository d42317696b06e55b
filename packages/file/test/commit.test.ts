// Commits (session/commit.ts, session/commit-log.ts): nothing after the record is durable
// fails the commit (a busy index lock, a failed search append).
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { codeOf, tempDir } from './helpers.js';

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

describe('nothing after a durable commit fails it', () => {
  it('a busy index lock delays no commit and fails none (compaction is best-effort)', async () => {
    await open().create({ id: 's' });
    // Another live process is compacting or repairing: it holds the index lock.
    writeFileSync(
      join(dir, 'locks', '.index.lock'),
      JSON.stringify({
        pid: process.pid,
        hostname: hostname(),
        acquiredAt: new Date().toISOString(),
        token: 'other',
      }),
    );
    const s = open({ indexSlackBytes: 0, lockTimeoutMs: 300 });
    expect(await codeOf(s.commit('s', { append: [{ role: 'user', content: 'turn 1' }] }))).toBe(
      'ok',
    );
    expect(await codeOf(s.commit('s', { append: [{ role: 'user', content: 'turn 2' }] }))).toBe(
      'ok',
    );
    expect((await open().loadMessages('s')).length).toBe(2);
    // Once the lock is gone, the due compaction happens.
    rmSync(join(dir, 'locks', '.index.lock'));
    await s.commit('s', { append: [] });
    expect((await open().list()).map((e) => [e.id, e.messageCount])).toEqual([['s', 2]]);
  });

  it('a failed search append does not fail the commit; the next commit rewrites the text', async () => {
    const s = open();
    await s.create({ id: 's' });
    const search = join(dir, 'sessions', 's', 'search.txt');
    rmSync(search, { force: true });
    mkdirSync(search); // appending to it fails (EISDIR)
    expect(await codeOf(s.commit('s', { append: [{ role: 'user', content: 'zebra' }] }))).toBe(
      'ok',
    );
    expect((await s.loadMessages('s')).length).toBe(1);
    rmdirSync(search);
    await s.commit('s', { append: [{ role: 'user', content: 'lion' }] });
    expect((await open().list({ query: 'zebra' })).map((e) => e.id)).toEqual(['s']);
    expect((await open().list({ query: 'lion' })).map((e) => e.id)).toEqual(['s']);
  });
});
