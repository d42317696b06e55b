// Damaged files: each gives a clear `corrupt` error or is recovered, and repair() says what it did.
import { promises as fsp, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isSessionKitError, type Message } from '@sessionkit/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeFrame, parseFrames } from '../src/format/frame.js';
import type { SnapshotMeta } from '../src/format/records.js';
import { FileStore } from '../src/index.js';
import { snapshotsOf, tempDir } from './helpers.js';

const msg = (role: 'user' | 'assistant', content: string): Message => ({ role, content });
const turn = (i: number) => [msg('user', `question ${i}`), msg('assistant', `answer ${i}`)];

/** Every path under `root` with its size, except those under `skip`. */
function listing(root: string, skip: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (path === skip) continue;
      const st = statSync(path);
      out.push(`${relative(root, path)}:${st.isDirectory() ? 'd' : st.size}`);
      if (st.isDirectory()) walk(path);
    }
  };
  walk(root);
  return out.sort();
}

async function expectCorrupt(p: Promise<unknown>, id: string, detail: RegExp): Promise<void> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isSessionKitError(e, 'corrupt'), String(e)).toBe(true);
  const message = (e as Error).message;
  expect(message).toMatch(/^\[sessionkit\/file\] /);
  expect(message).toContain(`"${id}"`);
  expect(message).toMatch(detail);
}

let root: string;
let dir: string;
let store: FileStore;
let outside: string[];

beforeEach(async () => {
  root = tempDir('sk-file-corrupt-');
  dir = join(root, 'store');
  await fsp.writeFile(join(root, 'neighbour.txt'), 'not ours');
  store = new FileStore({ dir, snapshotEvery: 1000 });
  outside = listing(root, dir);
});

afterEach(async () => {
  await store.close();
  // Nothing outside the store folder was ever written.
  expect(listing(root, dir)).toEqual(outside);
  await fsp.rm(root, { recursive: true, force: true });
});

describe('corruption', () => {
  it('a stored header that the strict check refuses (a counter out of range) is corrupt', async () => {
    await store.create({ id: 'odd', messages: turn(0) });
    const [snap] = snapshotsOf(dir, 'odd');
    const bytes = await fsp.readFile(snap!);
    const [first] = parseFrames<SnapshotMeta>(bytes).frames;
    // The snapshot frame again, a counter no write accepts in its header, checksums right.
    const meta = { ...first!.meta, header: { ...first!.meta.header, tokenCount: -5 } };
    const body = bytes.subarray(first!.bodyStart, first!.bodyEnd);
    const rest = bytes.subarray(first!.bodyEnd + 8); // after the frame's 8-byte tail
    await fsp.writeFile(snap!, Buffer.concat([encodeFrame(meta, body), rest]));
    const reader = new FileStore({ dir });
    try {
      await expectCorrupt(reader.load('odd'), 'odd', /tokenCount/);
      await expectCorrupt(reader.loadMessages('odd', { last: 1 }), 'odd', /tokenCount/);
      await expectCorrupt(reader.commit('odd', { append: turn(1) }), 'odd', /tokenCount/);
    } finally {
      await reader.close();
    }
  });

  it('a truncated snapshot is corrupt; repair reports it and keeps the rest', async () => {
    await store.create({ id: 'good', messages: turn(0) });
    await store.create({ id: 'bad', messages: turn(1) });
    const [snap] = snapshotsOf(dir, 'bad');
    const bytes = await fsp.readFile(snap!);
    await fsp.writeFile(snap!, bytes.subarray(0, bytes.length - 20));
    await expectCorrupt(store.load('bad'), 'bad', /snap-1\.skr/);
    await expectCorrupt(store.loadMessages('bad'), 'bad', /snap-1\.skr/);
    const report = await store.repair();
    expect(report.skippedCorrupt.map((c) => c.id)).toEqual(['bad']);
    expect(report.skippedCorrupt[0]!.reason).toMatch(/truncated|damaged/);
    expect(report.rebuilt).toBe(1);
    expect((await store.list()).map((s) => s.id)).toEqual(['good']);
    expect((await store.load('good')).messages).toEqual(turn(0));
    // A corrupt session can still be deleted.
    await store.delete('bad');
    await expect(store.load('bad')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a garbage record in the middle of the log is corrupt; a torn last record is ignored', async () => {
    await store.create({ id: 's' });
    for (let i = 0; i < 3; i++) await store.commit('s', { append: turn(i) });
    const log = join(dir, 'sessions', 's', 'log-1.skr');
    const clean = await fsp.readFile(log);
    // A torn final append (a writer killed mid-write) is not visible and is cut by the next writer.
    const torn = encodeFrame({ junk: true }, Buffer.from('[1,2,3]')).subarray(0, 30);
    await fsp.writeFile(log, Buffer.concat([clean, torn]));
    expect(await store.loadMessages('s')).toEqual([...turn(0), ...turn(1), ...turn(2)]);
    const peer = new FileStore({ dir });
    await peer.commit('s', { append: turn(3) });
    expect((await store.load('s')).messages).toHaveLength(8);
    await peer.close();
    // Garbage over the second record, with records after it: corruption, not a torn tail.
    const bytes = await fsp.readFile(log);
    const third = Math.floor(bytes.length / 3);
    bytes.fill(0x41, third, third + 40);
    await fsp.writeFile(log, bytes);
    await expectCorrupt(store.load('s'), 's', /log-1\.skr/);
    await expectCorrupt(store.loadMessages('s'), 's', /log-1\.skr/);
    const report = await store.repair();
    expect(report.skippedCorrupt).toHaveLength(1);
    expect(report.skippedCorrupt[0]).toMatchObject({ id: 's' });
  });

  it('a damaged index is rebuilt by repair, or by the next read on its own', async () => {
    for (let i = 0; i < 5; i++)
      await store.create({ id: `s${i}`, title: `t${i}`, messages: turn(i) });
    const before = await store.list();
    const index = join(dir, 'index.log');
    const damage = async () => {
      const bytes = await fsp.readFile(index);
      bytes.fill(0x42, 40, 80);
      await fsp.writeFile(index, bytes);
    };
    await damage();
    const fresh = new FileStore({ dir });
    const report = await fresh.repair();
    expect(report.rebuilt).toBe(5);
    expect(report.indexEntriesFixed).toBeGreaterThanOrEqual(1);
    expect(report.skippedCorrupt).toEqual([]);
    expect(await fresh.list()).toEqual(before);
    // The index is a cache: a reader that finds it damaged rebuilds it from the sessions.
    await damage();
    const other = new FileStore({ dir });
    expect(await other.list()).toEqual(before);
    expect((await other.repair()).indexEntriesFixed).toBe(0);
    await other.close();
    await fresh.close();
  });

  it('one changed byte in an index record that still parses is caught by its checksum', async () => {
    for (let i = 0; i < 5; i++) await store.create({ id: `s${i}`, title: `t${i}` });
    const before = await store.list();
    const index = join(dir, 'index.log');
    const bytes = await fsp.readFile(index);
    // `"t2"` becomes `"t7"`: valid JSON, a record in the middle of the file, so only the
    // meta checksum tells it from a real record (a torn tail it is not).
    const at = bytes.indexOf('"title":"t2"') + '"title":"t'.length;
    expect(at).toBeGreaterThan(0);
    bytes[at] = '7'.charCodeAt(0);
    await fsp.writeFile(index, bytes);
    const other = new FileStore({ dir });
    expect(await other.list()).toEqual(before);
    expect((await other.list()).map((s) => s.title)).not.toContain('t7');
    await other.close();
  });

  it('a missing index is rebuilt on the next read; a stale entry is fixed by repair', async () => {
    await store.create({ id: 'a', title: 'alpha', messages: turn(0) });
    await store.create({ id: 'b', title: 'beta' });
    await store.commit('b', { append: turn(1), patch: { title: 'beta two' } });
    const before = await store.list();
    await fsp.rm(join(dir, 'index.log'));
    const fresh = new FileStore({ dir });
    expect(await fresh.list()).toEqual(before);
    expect((await fresh.list({ query: 'answer 1' })).map((s) => s.id)).toEqual(['b']);
    // A stale entry appended to the index (a cache gone wrong) shows until repair fixes it.
    const stale = { ...before.find((s) => s.id === 'b')!, title: 'stale' };
    const { children: _c, ...entry } = stale;
    await fsp.appendFile(
      join(dir, 'index.log'),
      encodeFrame({
        v: 2,
        op: 'put',
        entry: {
          ...entry,
          createdAt: entry.createdAt.getTime(),
          updatedAt: entry.updatedAt.getTime(),
        },
      }),
    );
    expect((await fresh.list()).find((s) => s.id === 'b')!.title).toBe('stale');
    const report = await fresh.repair();
    expect(report.indexEntriesFixed).toBe(1);
    expect(await fresh.list()).toEqual(before);
    await fresh.close();
  });

  it('a missing snapshot under a surviving log is corrupt, a missing session folder not_found', async () => {
    await store.create({ id: 'x', messages: turn(0) });
    await store.commit('x', { append: turn(1) });
    await fsp.rm(snapshotsOf(dir, 'x')[0]!);
    await expectCorrupt(store.load('x'), 'x', /snapshot is missing/);
    await store.create({ id: 'y' });
    await fsp.rm(join(dir, 'sessions', 'y'), { recursive: true });
    await expect(store.load('y')).rejects.toMatchObject({ code: 'not_found' });
    const report = await store.repair();
    expect(report.skippedCorrupt.map((c) => c.id)).toEqual(['x']);
    // The vanished session's index entry is removed.
    expect((await store.list()).map((s) => s.id)).toEqual([]);
    expect(report.indexEntriesFixed).toBe(2);
  });

  it('a damaged event log and runtime status are corrupt', async () => {
    await store.create({ id: 'e' });
    for (let i = 0; i < 3; i++) await store.append('e', 'tick', { i });
    const events = join(dir, 'sessions', 'e', 'events.skr');
    const bytes = await fsp.readFile(events);
    bytes.fill(0x43, 10, 30);
    await fsp.writeFile(events, bytes);
    await expectCorrupt(store.events('e'), 'e', /events\.skr/);
    await store.saveRuntimeStatus('e', { ok: true });
    await fsp.writeFile(join(dir, 'sessions', 'e', 'status.json'), '{"ok":');
    await expectCorrupt(store.loadRuntimeStatus('e'), 'e', /status\.json/);
  });
});
