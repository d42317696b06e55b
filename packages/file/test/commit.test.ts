// Commits (session/commit.ts, session/commit-log.ts): nothing after the record is durable
// fails the commit (a busy index lock, a failed search append).
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeOf, storeFolderFixture } from './helpers.js';

const fixture = storeFolderFixture();

describe('nothing after a durable commit fails it', () => {
  it('a busy index lock delays no commit and fails none (compaction is best-effort)', async () => {
    await fixture.open().create({ id: 's' });
    // Another live process is compacting or repairing: it holds the index lock.
    writeFileSync(
      join(fixture.dir, 'locks', '.index.lock'),
      JSON.stringify({
        pid: process.pid,
        hostname: hostname(),
        acquiredAt: new Date().toISOString(),
        token: 'other',
      }),
    );
    const s = fixture.open({ indexSlackBytes: 0, lockTimeoutMs: 300 });
    expect(await codeOf(s.commit('s', { append: [{ role: 'user', content: 'turn 1' }] }))).toBe(
      'ok',
    );
    expect(await codeOf(s.commit('s', { append: [{ role: 'user', content: 'turn 2' }] }))).toBe(
      'ok',
    );
    expect((await fixture.open().loadMessages('s')).length).toBe(2);
    // Once the lock is gone, the due compaction happens.
    rmSync(join(fixture.dir, 'locks', '.index.lock'));
    await s.commit('s', { append: [] });
    expect((await fixture.open().list()).map((e) => [e.id, e.messageCount])).toEqual([['s', 2]]);
  });

  it('a failed search append does not fail the commit; the next commit rewrites the text', async () => {
    const s = fixture.open();
    await s.create({ id: 's' });
    const search = join(fixture.dir, 'sessions', 's', 'search.txt');
    rmSync(search, { force: true });
    mkdirSync(search); // appending to it fails (EISDIR)
    expect(await codeOf(s.commit('s', { append: [{ role: 'user', content: 'zebra' }] }))).toBe(
      'ok',
    );
    expect((await s.loadMessages('s')).length).toBe(1);
    rmdirSync(search);
    await s.commit('s', { append: [{ role: 'user', content: 'lion' }] });
    expect((await fixture.open().list({ query: 'zebra' })).map((e) => e.id)).toEqual(['s']);
    expect((await fixture.open().list({ query: 'lion' })).map((e) => e.id)).toEqual(['s']);
  });
});
