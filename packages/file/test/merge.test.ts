// Merge (session/merge.ts): the lineage on disk across store instances and processes.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseFrames } from '../src/format/frame.js';
import type { LogMeta, SnapshotMeta } from '../src/format/records.js';
import { FileStore } from '../src/index.js';
import { codeOf, msg, snapshotsOf, tempFolders } from './helpers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const dist = join(here, '..', 'dist', 'index.js');
const freshDir = tempFolders().storeDir;

/** Runs an ES module snippet against the built package in another process. */
function inChild(code: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', `import { FileStore } from ${JSON.stringify(dist)};\n${code}`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`child exited ${c}: ${err}`))));
  });
}

describe('merge lineage on disk', () => {
  beforeAll(() => {
    if (!existsSync(dist)) throw new Error('run `pnpm --filter @sessionkit/file build` first');
  });

  it('a replace made by another process after the branch makes the merge diverge', async () => {
    const dir = freshDir();
    const a = new FileStore({ dir });
    await a.create({ id: 'A', messages: [msg('m0'), msg('m1')] });
    const b = await a.branch('A', 2);
    await a.commit(b.id, { append: [msg('b1')] });
    await a.close();
    // Same number of messages, other content: only the lineage tells.
    await inChild(
      `const s = new FileStore({ dir: ${JSON.stringify(dir)} });
       await s.commit('A', { replace: [{ role: 'user', content: 'r0' }, { role: 'user', content: 'r1' }] });
       await s.close();`,
    );
    const again = new FileStore({ dir });
    const before = await again.load('A');
    expect(await codeOf(again.merge(b.id))).toBe('merge_diverged');
    expect(await again.load('A')).toEqual(before); // nothing written
    await again.repair(); // repair keeps the lineage
    expect(await codeOf(new FileStore({ dir }).merge(b.id))).toBe('merge_diverged');
    await again.close();
  });

  it('counters: the parent keeps its own increments across instances (157)', async () => {
    const dir = freshDir();
    const s1 = new FileStore({ dir, snapshotEvery: 1 });
    await s1.create({ id: 'P', tokenCount: 100, messages: [msg('p')] });
    const child = await s1.branch('P', 1);
    await s1.close();
    const s2 = new FileStore({ dir, snapshotEvery: 1 });
    await s2.commit('P', { increment: { tokenCount: 7 } });
    await s2.commit(child.id, { append: [msg('c')], increment: { tokenCount: 50 } });
    await s2.close();
    const s3 = new FileStore({ dir });
    const merged = await s3.merge(child.id);
    expect(merged.tokenCount).toBe(157);
    expect(merged.messages).toEqual([msg('p'), msg('c')]);
    expect((await new FileStore({ dir }).load('P')).tokenCount).toBe(157);
    await s3.close();
  });

  it('the promotion sequence of the issue gives merge_diverged, nothing written', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    await s.create({ id: 'A', messages: [msg('m0'), msg('m1')] });
    const b = await s.branch('A', 2);
    await s.commit(b.id, { append: [msg('b1'), msg('b2'), msg('b3')] });
    await s.commit('A', { append: [msg('x1'), msg('x2')] });
    const c = await s.branch(b.id, 5);
    await s.delete(b.id);
    await s.close();
    const t = new FileStore({ dir });
    const promoted = await t.load(c.id);
    expect(promoted.parentId).toBe('A');
    expect(promoted.branchedAtTurn).toBe(2);
    const before = await t.load('A');
    expect(await codeOf(t.merge(c.id))).toBe('merge_diverged');
    expect(await t.load('A')).toEqual(before);
    await t.close();
  });

  it('stores the lineage in snapshot and log metas, not in the session', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    await s.create({ id: 'A', messages: [msg('m0')] });
    const b = await s.branch('A', 1);
    await s.commit('A', { replace: [msg('r')] });
    await s.commit(b.id, { append: [msg('b')] });
    const snap = parseFrames<SnapshotMeta>(readFileSync(snapshotsOf(dir, 'A').at(-1)!));
    expect(snap.frames[0]!.meta.lineage).toEqual({ rewrites: 1 });
    const log = parseFrames<LogMeta>(readFileSync(join(dir, 'sessions', b.id, 'log-1.skr')));
    expect(log.frames[0]!.meta.lineage).toMatchObject({ rewrites: 0, base: { parentRewrites: 0 } });
    expect(Object.keys(await s.load(b.id))).not.toContain('lineage');
    // enforceMax deletes the root: its child becomes a root without a base.
    await s.create({ id: 'Z' });
    expect(await s.enforceMax(1)).toBe(1);
    const root = await s.load(b.id);
    expect(root.parentId).toBeUndefined();
    expect(await codeOf(s.merge(b.id))).toBe('invalid_argument');
    await s.close();
  });
});
