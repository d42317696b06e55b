// Regression tests: pruning racing a commit, a writer killed
// between its data and its index record, failures after a commit is durable, inode numbers
// reused by the file system, repair racing a compaction, a compaction killed half-way.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isSessionKitError } from '@sessionkit/core';
import { withFileLock } from '@sessionkit/core/adapter';
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

async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (e: unknown) => (isSessionKitError(e) ? e.code : `foreign: ${String(e)}`),
  );
}

/** A lock file as core's `withFileLock` writes it, naming a process that has exited. */
function deadLock(path: string): void {
  const pid = spawnSync(process.execPath, ['-e', '']).pid;
  let pidNamespace: string | undefined;
  try {
    pidNamespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    pidNamespace = undefined;
  }
  writeFileSync(
    path,
    JSON.stringify({
      pid,
      hostname: hostname(),
      acquiredAt: new Date().toISOString(),
      token: 'dead',
      pidNamespace,
    }),
    { mode: 0o600 },
  );
}

/**
 * Session `x` at revision 2 whose writer was "killed" after its commit was durable and
 * before its index record: the index ends before that record and its lock file remains.
 */
async function crashedCommit(): Promise<void> {
  const w = open();
  await w.create({ id: 'x', title: 't' });
  const index = join(dir, 'index.log');
  const before = statSync(index).size;
  await w.commit('x', { append: [{ role: 'user', content: 'hello' }] });
  await w.close();
  truncateSync(index, before);
  deadLock(join(dir, 'locks', 'x.lock'));
}

describe('enforceMax re-checks each candidate under its lock', () => {
  it('keeps a candidate that was committed to between selection and removal', async () => {
    const a = open();
    const b = open();
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
    const holder = withFileLock(join(dir, 'locks', 'b.lock'), async () => {
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

  it('skips a candidate whose head under the lock is not the index entry it was chosen by', async () => {
    const a = open();
    await a.create({ id: 'p' });
    await a.create({ id: 'q' });
    await a.create({ id: 'r' });
    // `p` is a pruning candidate (oldest root); the index entry the pruner sees is
    // replaced by one that is stale on purpose: the head under the lock decides.
    const index = join(dir, 'index.log');
    const before = statSync(index).size;
    await a.commit('p', { append: [] });
    truncateSync(index, before);
    expect(await a.enforceMax(2)).toBe(0); // p changed (revision 2): skipped
    expect((await a.list()).map((s) => s.id).sort()).toEqual(['p', 'q', 'r']);
  });
});

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
      const t = open();
      expect((await t.list()).find((e) => e.id === 'x')?.revision).toBe(2);
      await codeOf(op(t));
      expect(existsSync(join(dir, 'locks', 'x.lock'))).toBe(false);
      const entry = (await t.list()).find((e) => e.id === 'x');
      expect([entry?.revision, entry?.messageCount]).toEqual([2, 1]);
      const fresh = open();
      const again = (await fresh.list()).find((e) => e.id === 'x');
      expect([again?.revision, again?.messageCount]).toEqual([2, 1]);
    });
  }

  it('a create killed before its index record: a retried create leaves it listed', async () => {
    const s = open();
    await s.list();
    const index = join(dir, 'index.log');
    const before = statSync(index).size;
    await s.create({ id: 'x', title: 't' });
    await s.close();
    truncateSync(index, before);
    deadLock(join(dir, 'locks', 'x.lock'));
    const t = open();
    expect(await codeOf(t.create({ id: 'x', title: 't' }))).toBe('exists');
    expect((await t.list()).map((e) => e.id)).toEqual(['x']);
  });
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

describe('cached heads survive no inode reuse', () => {
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

describe("another store's index cache survives inode reuse", () => {
  it('a rewritten index with the old inode number and a larger size is read from the start', async () => {
    const w = open();
    for (let i = 0; i < 5; i++) await w.create({ id: `k${i}`, title: 'x'.repeat(10) });
    const a = open();
    expect((await a.list()).length).toBe(5);
    const index = join(dir, 'index.log');
    const cachedSize = statSync(index).size;
    const hold = join(dir, 'index.hold');
    linkSync(index, hold); // keeps the old inode so the compacted file can be put into it
    await open({ indexSlackBytes: 0 }).commit('k0', { patch: { title: 'changed' } }); // compacts
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
    const a = open({ sync: false });
    for (let i = 0; i < 400; i++) await a.create({ id: `s${i}`, title: 'x' });
    const b = open({ indexSlackBytes: 0 }); // compacts after every write
    const repairing = a.repair();
    await new Promise((r) => setTimeout(r, 20));
    await b.create({ id: 'zz-late', title: 'created during repair' });
    await repairing;
    const ids = (await open().list({ limit: 1000 })).map((e) => e.id);
    expect(ids).toHaveLength(401);
    expect(ids).toContain('zz-late');
  });
});

describe('a compaction killed after its rename', () => {
  it('a reader that finds the dead index lock rebuilds the index', async () => {
    const w = open();
    await w.create({ id: 'x', title: 't' });
    const index = join(dir, 'index.log');
    const before = statSync(index).size;
    await w.commit('x', { append: [{ role: 'user', content: 'hello' }] });
    await w.close();
    // The record went to the old file after the compaction read it; the compaction was
    // killed before carrying it over: it is missing, and only the index lock remains.
    truncateSync(index, before);
    deadLock(join(dir, 'locks', '.index.lock'));
    const t = open();
    const entry = (await t.list()).find((e) => e.id === 'x');
    expect([entry?.revision, entry?.messageCount]).toEqual([2, 1]);
    expect(existsSync(join(dir, 'locks', '.index.lock'))).toBe(false);
  });
});

describe('create never destroys a damaged session', () => {
  it('a log without its snapshot makes create fail with corrupt and keeps the log', async () => {
    const s = open();
    await s.create({ id: 'x' });
    await s.commit('x', { append: [{ role: 'user', content: 'keep me' }] });
    const folder = join(dir, 'sessions', 'x');
    rmSync(join(folder, 'snap-1.skr'));
    expect(await codeOf(open().create({ id: 'x' }))).toBe('corrupt');
    expect(readdirSync(folder)).toContain('log-1.skr');
  });
});
