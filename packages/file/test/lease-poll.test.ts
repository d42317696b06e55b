// Session leases where the wants folder cannot be watched (some network and virtual file
// systems): the holder polls it instead, and another process still gets an idle lease.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { msg, runRaceChild, storeFolderFixture } from './helpers.js';

const watchCalls = vi.hoisted(() => ({ n: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const watch = () => {
    watchCalls.n++;
    throw Object.assign(new Error('watch is not supported here'), { code: 'ENOSYS' });
  };
  return { ...fs, default: { ...fs, watch }, watch };
});

const fixture = storeFolderFixture();

describe('session leases without a watch of the wants folder', () => {
  it('another process gets a lease this store holds idle, through the poll', async () => {
    const s = fixture.open({ leaseMs: 60_000 });
    await s.create({ id: 'p' });
    await s.commit('p', { append: [msg('parent')] });
    expect(existsSync(join(fixture.dir, 'locks', 'p.lock'))).toBe(true);
    expect(watchCalls.n).toBeGreaterThan(0); // the store tried, and fell back to polling
    writeFileSync(join(fixture.dir, '..', 'go'), ''); // race-child starts on it
    const out = await runRaceChild(fixture.dir, 'p', 'C', 'free', '3', { lockTimeoutMs: 5_000 });
    expect(JSON.parse(out)).toEqual(['ok', 'ok', 'ok']);
    const r = await s.commit('p', { append: [msg('parent again')] });
    expect(r.messageCount).toBe(5);
    expect(readdirSync(join(fixture.dir, 'locks', 'wants'))).toEqual([]);
    await s.close();
  });
});
