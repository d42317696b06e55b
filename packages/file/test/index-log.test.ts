// The index log (index-log/): incremental reads across inode reuse, repair racing a
// compaction, a compaction killed after its rename.
import {
  existsSync,
  linkSync,
  readFileSync,
  renameSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deadLock, storeFolderFixture } from './helpers.js';

const fixture = storeFolderFixture();

describe("another store's index cache survives inode reuse", () => {
  it('a rewritten index with the old inode number and a larger size is read from the start', async () => {
    const w = fixture.open();
    for (let i = 0; i < 5; i++) await w.create({ id: `k${i}`, title: 'x'.repeat(10) });
    const a = fixture.open();
    expect((await a.list()).length).toBe(5);
    const index = join(fixture.dir, 'index.log');
    const cachedSize = statSync(index).size;
    const hold = join(fixture.dir, 'index.hold');
    linkSync(index, hold); // keeps the old inode so the compacted file can be put into it
    await fixture.open({ indexSlackBytes: 0 }).commit('k0', { patch: { title: 'changed' } }); // compacts
    await w.commit('k1', { patch: { title: 'also' } }); // one more record after it
    const compacted = readFileSync(index);
    expect(compacted.length).toBeGreaterThan(cachedSize);
    writeFileSync(hold, compacted); // the old inode number now holds the new index
    renameSync(hold, index);
    const reads = a.stats.transcriptReads;
    const listed = await a.list();
    expect(listed.find((e) => e.id === 'k0')?.title).toBe('changed');
    expect(listed.find((e) => e.id === 'k1')?.title).toBe('also');
    expect(listed.length).toBe(5);
    expect(a.stats.transcriptReads).toBe(reads); // no rebuild from a misread
  });
});

describe('repair racing a compaction', () => {
  it('keeps an entry written during its scan while another store compacts', async () => {
    const a = fixture.open({ sync: false });
    for (let i = 0; i < 400; i++) await a.create({ id: `s${i}`, title: 'x' });
    const b = fixture.open({ indexSlackBytes: 0 }); // compacts after every write
    const repairing = a.repair();
    await new Promise((r) => setTimeout(r, 20));
    await b.create({ id: 'zz-late', title: 'created during repair' });
    await repairing;
    const ids = (await fixture.open().list({ limit: 1000 })).map((e) => e.id);
    expect(ids).toHaveLength(401);
    expect(ids).toContain('zz-late');
  });
});

describe('a compaction killed after its rename', () => {
  it('a reader that finds the dead index lock rebuilds the index', async () => {
    const w = fixture.open();
    await w.create({ id: 'x', title: 't' });
    const index = join(fixture.dir, 'index.log');
    const before = statSync(index).size;
    await w.commit('x', { append: [{ role: 'user', content: 'hello' }] });
    await w.close();
    // The record went to the old file after the compaction read it; the compaction was
    // killed before carrying it over: it is missing, and only the index lock remains.
    truncateSync(index, before);
    deadLock(join(fixture.dir, 'locks', '.index.lock'));
    const t = fixture.open();
    const entry = (await t.list()).find((e) => e.id === 'x');
    expect([entry?.revision, entry?.messageCount]).toEqual([2, 1]);
    expect(existsSync(join(fixture.dir, 'locks', '.index.lock'))).toBe(false);
  });
});
