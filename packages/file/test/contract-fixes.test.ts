// Issue 8 on the file store: merge lineage persisted on disk (across store instances and
// processes), value limits, per-message search, format-2 upgrade, URL query options.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, promises as fsp, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSessionKitError, type Message, openStore } from '@sessionkit/core';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileStore, FORMAT_VERSION, storeAdapter } from '../src/index.js';
import { type LogMeta, parseFrames, type SnapshotMeta } from '../src/layout.js';
import { snapshotsOf, tempDir } from './helpers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const dist = join(here, '..', 'dist', 'index.js');
const roots: string[] = [];
function freshDir(): string {
  const root = tempDir('sk-file-fix-');
  roots.push(root);
  return join(root, 'store');
}
afterAll(async () => {
  for (const r of roots) await fsp.rm(r, { recursive: true, force: true });
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (e: unknown) => (isSessionKitError(e) ? e.code : `foreign: ${String(e)}`),
  );
}

const msg = (content: string): Message => ({ role: 'user', content });

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

describe('value limits', () => {
  it('__proto__, constructor and prototype keys round-trip as own keys', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    const odd = JSON.parse('{"__proto__":{"x":1},"constructor":"c","prototype":[1]}');
    const meta = JSON.parse('{"__proto__":"m","constructor":"k"}');
    await s.create({
      id: 'p',
      messages: [{ role: 'user', content: 'hi', ...odd } as Message],
      state: odd,
      metadata: meta,
    });
    await s.commit('p', {
      patch: { metadata: JSON.parse('{"__proto__":"patched","prototype":"p"}') },
      append: [{ role: 'user', content: 'x', ...odd } as Message],
    });
    await s.append('p', 'ev', odd);
    await s.saveRuntimeStatus('p', odd);
    await s.close();
    const t = new FileStore({ dir });
    const loaded = await t.load('p');
    const own = (o: unknown, k: string) => Object.hasOwn(o as object, k);
    for (const m of loaded.messages) {
      expect(own(m, '__proto__')).toBe(true);
      expect(JSON.stringify(m)).toContain('"__proto__":{"x":1}');
    }
    expect(own(loaded.state, '__proto__')).toBe(true);
    expect(JSON.stringify(loaded.state)).toBe(JSON.stringify(odd));
    expect(loaded.metadata).toEqual(
      JSON.parse('{"__proto__":"patched","constructor":"k","prototype":"p"}'),
    );
    expect(own(loaded.metadata, '__proto__')).toBe(true);
    const [listed] = await t.list({ limit: 1 });
    expect(own(listed!.metadata, '__proto__')).toBe(true);
    const [event] = await t.events('p');
    expect(JSON.stringify(event!.payload)).toBe(JSON.stringify(odd));
    expect(JSON.stringify(await t.loadRuntimeStatus('p'))).toBe(JSON.stringify(odd));
    const window = await t.loadMessages('p', { last: 1 });
    expect(own(window[0], '__proto__')).toBe(true);
    await t.close();
  });

  it('an increment whose result leaves the range is invalid_argument, nothing written', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    await s.create({ id: 'c', tokenCount: Number.MAX_SAFE_INTEGER, costUsd: 1.7e308 });
    const logBytes = () =>
      readdirSync(join(dir, 'sessions', 'c'))
        .filter((n) => n.startsWith('log-'))
        .reduce((a, n) => a + readFileSync(join(dir, 'sessions', 'c', n)).length, 0);
    expect(
      await codeOf(s.commit('c', { increment: { tokenCount: Number.MAX_SAFE_INTEGER } })),
    ).toBe('invalid_argument');
    expect(await codeOf(s.commit('c', { increment: { costUsd: 1.7e308 } }))).toBe(
      'invalid_argument',
    );
    expect(logBytes()).toBe(0);
    const after = await new FileStore({ dir }).load('c');
    expect(after.revision).toBe(1);
    expect(after.tokenCount).toBe(Number.MAX_SAFE_INTEGER);
    expect(after.costUsd).toBe(1.7e308);
    // -0 is stored as 0; costUsd round-trips exactly.
    await s.commit('c', { patch: { tokenCount: -0, costUsd: 0.1 + 0.2 } });
    const z = await new FileStore({ dir }).load('c');
    expect(Object.is(z.tokenCount, 0)).toBe(true);
    expect(z.costUsd).toBe(0.1 + 0.2);
    await s.close();
  });

  it('state nested 513 deep is refused before any I/O; 512 round-trips everywhere', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    const nest = (n: number) => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = [v];
      return v as never;
    };
    expect(await codeOf(s.create({ id: 'deep', state: nest(513) }))).toBe('invalid_argument');
    expect(existsSync(join(dir, 'sessions', 'deep'))).toBe(false);
    await s.create({ id: 'ok', state: nest(512), messages: [nest(511)] });
    await s.commit('ok', { append: [nest(511)], patch: { state: nest(512) } });
    expect(JSON.stringify((await s.load('ok')).state)).toBe(JSON.stringify(nest(512)));
    expect((await s.list()).map((x) => x.id)).toEqual(['ok']);
    expect((await s.repair()).skippedCorrupt).toEqual([]);
    expect(await s.loadMessages('ok', { last: 1 })).toEqual([nest(511)]);
    await s.close();
  });
});

describe('search', () => {
  it('matches within one message, never across two (also after appends)', async () => {
    const s = new FileStore({ dir: freshDir() });
    await s.create({ id: 'q', messages: [msg('Hello one'), msg('two')] });
    await s.commit('q', {
      append: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'three' },
            { type: 'text', text: 'four' },
          ],
        },
      ],
    });
    await s.commit('q', { append: [msg('five')] });
    const ids = async (query: string) => (await s.list({ query })).map((x) => x.id);
    expect(await ids('one\ntwo')).toEqual([]);
    expect(await ids('onetwo')).toEqual([]);
    expect(await ids('fourfive')).toEqual([]);
    expect(await ids('four\nfive')).toEqual([]);
    expect(await ids('three\nfour')).toEqual(['q']); // parts of one message
    expect(await ids('hello one')).toEqual(['q']);
    await s.close();
  });
});

describe('format 2 → 3', () => {
  it('upgrades a format-2 folder written by the previous version', async () => {
    const dir = freshDir();
    cpSync(join(here, 'fixtures', 'format-v2'), dir, { recursive: true });
    const s = new FileStore({ dir });
    // Search text of format 2 separated messages by "\n": a query spanning two matched.
    expect((await s.list({ query: 'one\ntwo' })).map((x) => x.id)).toEqual([]);
    // Parts of one message (the branch copied that message too).
    const within = (await s.list({ query: 'three\nfour' })).map((x) => x.id);
    expect(within).toHaveLength(2);
    expect(within).toContain('v2-root');
    expect(JSON.parse(readFileSync(join(dir, 'format.json'), 'utf8')).version).toBe(FORMAT_VERSION);
    expect(readFileSync(join(dir, 'sessions', 'v2-root', 'search.txt'), 'utf8')).toBe(
      'Ahello oneAtwoAthree\nfourAfiveAsix',
    );
    const root = await s.load('v2-root');
    expect(root).toMatchObject({
      title: 'Format two root',
      revision: 3,
      tokenCount: 10,
      costUsd: 0.5,
      state: { step: 6 },
      metadata: { team: 'a' },
    });
    expect(root.messages).toHaveLength(5);
    expect(root.children).toHaveLength(1);
    expect(await s.events('v2-root')).toHaveLength(1);
    expect(await s.loadRuntimeStatus('v2-root')).toEqual({ busy: false });
    expect(await s.resolve('cli', 'chat', 't', '')).toBe('v2-root');
    // Windows read the old snapshot (no offset table) whole, correctly.
    expect(await s.loadMessageWindow('v2-folded', { last: 2 })).toMatchObject({
      offset: 4,
      messageCount: 6,
      revision: 6,
    });
    // The child has no stored lineage (readLineage(undefined)); the parent moved on.
    expect(await codeOf(s.merge(root.children[0]!))).toBe('merge_diverged');
    // The next write gives the snapshot its offset table and the new metas.
    await s.commit('v2-root', { append: [msg('seven')] });
    const snaps = snapshotsOf(dir, 'v2-root');
    const frames = parseFrames<SnapshotMeta>(readFileSync(snaps.at(-1)!)).frames;
    expect(frames.map((f) => (f.meta as { kind: string }).kind)).toEqual(['snapshot', 'offsets']);
    expect(frames[0]!.meta.lineage).toEqual({ rewrites: 0 });
    expect(
      (await s.loadMessages('v2-root', { offset: 1, limit: 2 })).map((m) => (m as Message).content),
    ).toEqual([
      'two',
      [
        { type: 'text', text: 'three' },
        { type: 'text', text: 'four' },
      ],
    ]);
    expect(readFileSync(join(dir, 'sessions', 'v2-root', 'search.txt'), 'utf8')).toBe(
      'Ahello oneAtwoAthree\nfourAfiveAsixAseven',
    );
    await s.close();
  });
});

describe('file: URL query options', () => {
  registerStoreAdapter(storeAdapter);
  it('honours every documented option given as a query parameter', async () => {
    const dir = freshDir();
    const s = (await openStore(
      `file://${dir}?snapshotEvery=2&sync=false&lockTimeoutMs=1234&lockStaleMs=800&indexSlackBytes=10`,
    )) as unknown as FileStore;
    expect(s.dir).toBe(dir);
    await s.create({ id: 'u' });
    for (let i = 0; i < 6; i++) await s.commit('u', { append: [msg(`m${i}`)] });
    // snapshotEvery=2: the log was folded into later snapshots.
    expect(
      Number(
        snapshotsOf(dir, 'u')
          .at(-1)!
          .match(/snap-(\d+)/)![1],
      ),
    ).toBeGreaterThan(1);
    await s.close();
    // lockTimeoutMs: a held lock makes a write fail after about that long, not 10 s.
    await fsp.writeFile(
      join(dir, 'locks', 'u.lock'),
      JSON.stringify({ pid: process.pid, hostname: (await import('node:os')).hostname() }),
    );
    const quick = (await openStore(`file://${dir}?lockTimeoutMs=50`)) as unknown as FileStore;
    const t0 = Date.now();
    expect(await codeOf(quick.commit('u', { append: [msg('x')] }))).toBe('unavailable');
    expect(Date.now() - t0).toBeLessThan(5_000);
    await fsp.rm(join(dir, 'locks', 'u.lock'));
    await quick.close();
    const rel = (await openStore('file:./x-rel?sync=1')) as unknown as FileStore;
    expect(rel.dir.endsWith('x-rel')).toBe(true);
    await rel.close();
  });

  it('rejects unknown parameters (naming them and the known ones) and bad values', async () => {
    const dir = freshDir();
    const err = await openStore(`file://${dir}?bogus=1`).catch((e: unknown) => e);
    expect(isSessionKitError(err, 'invalid_argument')).toBe(true);
    expect((err as Error).message).toMatch(/"bogus".*snapshotEvery, lockTimeoutMs, lockStaleMs/);
    expect(await codeOf(openStore(`file://${dir}?dir=/tmp`))).toBe('invalid_argument');
    expect(await codeOf(openStore(`file://${dir}?lockTimeoutMs=abc`))).toBe('invalid_argument');
    expect(await codeOf(openStore(`file://${dir}?lockStaleMs=5`))).toBe('invalid_argument');
    expect(await codeOf(openStore(`file://${dir}?snapshotEvery=0`))).toBe('invalid_argument');
    expect(await codeOf(openStore(`file://${dir}?snapshotEvery=1.5`))).toBe('invalid_argument');
    expect(await codeOf(openStore(`file://${dir}?sync=maybe`))).toBe('invalid_argument');
    expect(await codeOf(openStore(`file://${dir}?sync=true&sync=false`))).toBe('invalid_argument');
    expect(await codeOf(openStore(`file://${dir}?sync=true`, { sync: false }))).toBe(
      'invalid_argument',
    );
    expect(await codeOf(openStore(`file:./rel?lockTimeoutMs=5&x=1`))).toBe('invalid_argument');
  });
});
