// Session leases (session/lease.ts): a commit keeps its session's lock file for the next
// one; other stores and processes still get the lock promptly, and a lease never outlives
// its store or a failed write.
import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { codeOf, msg, runRaceChild, storeFolderFixture } from './helpers.js';

const fixture = storeFolderFixture();
const lockOf = (id: string) => join(fixture.dir, 'locks', `${id}.lock`);

describe('session leases', () => {
  it('commits and branches run no AsyncLocalStorage (its promise hooks cost every commit)', async () => {
    const s = fixture.open();
    await s.create({ id: 'x' }); // opening the folder takes core's format lock
    const run = vi.spyOn(AsyncLocalStorage.prototype, 'run');
    const enter = vi.spyOn(AsyncLocalStorage.prototype, 'enterWith');
    try {
      await s.commit('x', { append: [msg('one')] });
      await s.commit('x', { append: [msg('two')] });
      const child = await s.branch('x', 1);
      expect((await s.load(child.id)).parentId).toBe('x');
      expect(run).not.toHaveBeenCalled();
      expect(enter).not.toHaveBeenCalled();
    } finally {
      run.mockRestore();
      enter.mockRestore();
    }
  });

  it('a commit keeps the lock file, dated ahead so no other process judges it stale', async () => {
    const s = fixture.open({ leaseMs: 10_000 });
    await s.create({ id: 'x' });
    expect(existsSync(lockOf('x'))).toBe(false); // a create does not keep it
    await s.commit('x', { append: [msg('one')] });
    expect(existsSync(lockOf('x'))).toBe(true);
    expect(statSync(lockOf('x')).mtimeMs).toBeGreaterThan(Date.now() + 5_000);
    await s.commit('x', { append: [msg('two')] });
    await s.close();
    expect(existsSync(lockOf('x'))).toBe(false);
  });

  it('leaseMs: 0 and a failed commit leave no lock file', async () => {
    const s = fixture.open({ leaseMs: 0 });
    await s.create({ id: 'x' });
    await s.commit('x', { append: [msg('one')] });
    expect(existsSync(lockOf('x'))).toBe(false);
    const t = fixture.open();
    await t.commit('x', { append: [msg('two')] });
    expect(existsSync(lockOf('x'))).toBe(true);
    expect(await codeOf(t.commit('x', { expectedRevision: 1, append: [msg('no')] }))).toBe(
      'conflict',
    );
    expect(existsSync(lockOf('x'))).toBe(false);
  });

  it('another store of this process gets a held lease at once, and the holder re-reads', async () => {
    const a = fixture.open();
    const b = fixture.open();
    await a.create({ id: 'x' });
    const started = Date.now();
    for (let i = 0; i < 10; i++) {
      const r = await (i % 2 ? b : a).commit('x', {
        expectedMessageCount: i,
        append: [msg(`${i}`)],
      });
      expect(r.messageCount).toBe(i + 1);
    }
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await fixture.open().loadMessages('x')).length).toBe(10);
  });

  it('another process gets a lease this store holds idle, through its want file', async () => {
    const s = fixture.open({ leaseMs: 60_000 });
    await s.create({ id: 'x' });
    await s.commit('x', { append: [msg('parent')] });
    expect(existsSync(lockOf('x'))).toBe(true);
    writeFileSync(join(fixture.dir, '..', 'go'), '');
    const started = Date.now();
    const out = await runRaceChild(fixture.dir, 'x', 'C', 'free', '3', { lockTimeoutMs: 5_000 });
    expect(JSON.parse(out)).toEqual(['ok', 'ok', 'ok']);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The holder released it and re-reads before its next commit: nothing is lost.
    const r = await s.commit('x', { append: [msg('parent again')] });
    expect(r.messageCount).toBe(5);
    expect(readdirSync(join(fixture.dir, 'locks', 'wants'))).toEqual([]);
    await s.close();
  });
});
