// File modes, default folder, file: URLs, on-disk format versions, options and close.
import { cpSync, promises as fsp, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSessionKitError, openStore } from '@sessionkit/core';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { afterAll, describe, expect, it } from 'vitest';
import {
  defaultFileStoreDir,
  dirFromFileUrl,
  FileStore,
  FORMAT_VERSION,
  storeAdapter,
} from '../src/index.js';
import { tempDir } from './helpers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const roots: string[] = [];
function fresh(): string {
  const root = tempDir('sk-file-misc-');
  roots.push(root);
  return root;
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

describe('privacy', () => {
  it.skipIf(process.platform === 'win32')('creates folders 0700 and files 0600', async () => {
    const dir = join(fresh(), 'a', 'store');
    const store = new FileStore({ dir, snapshotEvery: 2 });
    await store.create({ id: 's', messages: [{ role: 'user', content: 'secret' }] });
    for (let i = 0; i < 5; i++)
      await store.commit('s', { append: [{ role: 'user', content: `m${i}` }] });
    await store.commit('s', { replace: [] });
    await store.append('s', 'e', { x: 1 });
    await store.saveRuntimeStatus('s', { ok: true });
    await store.bind('tg', 'chat', '', 's');
    await store.branch('s', 0);
    await store.delete('s');
    await store.create({ id: 't' });
    await store.repair();
    const seen: string[] = [];
    const walk = (p: string) => {
      const st = statSync(p);
      const mode = st.mode & 0o777;
      seen.push(`${p.slice(dir.length) || '/'} ${mode.toString(8)}`);
      if (st.isDirectory()) {
        expect(mode, p).toBe(0o700);
        for (const n of readdirSync(p)) walk(join(p, n));
      } else {
        expect(mode, p).toBe(0o600);
      }
    };
    walk(dir);
    expect(statSync(join(dir, '..')).mode & 0o777).toBe(0o700); // created parent too
    expect(seen.some((s) => s.startsWith('/router.json'))).toBe(true);
    expect(seen.some((s) => s.includes('/events.skr'))).toBe(false); // deleted with s
    await store.close();
  });
});

describe('default folder', () => {
  it('follows XDG on Linux, Application Support on macOS, LOCALAPPDATA on Windows', () => {
    expect(defaultFileStoreDir({ XDG_DATA_HOME: '/x/data' }, 'linux', '/home/u')).toBe(
      '/x/data/sessionkit/sessions',
    );
    expect(defaultFileStoreDir({}, 'linux', '/home/u')).toBe(
      '/home/u/.local/share/sessionkit/sessions',
    );
    // A relative XDG_DATA_HOME is ignored, as the spec says.
    expect(defaultFileStoreDir({ XDG_DATA_HOME: 'rel' }, 'freebsd', '/home/u')).toBe(
      '/home/u/.local/share/sessionkit/sessions',
    );
    expect(defaultFileStoreDir({ XDG_DATA_HOME: '/x' }, 'darwin', '/Users/u')).toBe(
      '/Users/u/Library/Application Support/sessionkit/sessions',
    );
    expect(
      defaultFileStoreDir(
        { LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' },
        'win32',
        'C:\\Users\\u',
      ),
    ).toBe('C:\\Users\\u\\AppData\\Local\\sessionkit\\sessions');
    expect(defaultFileStoreDir({}, 'win32', 'C:\\Users\\u')).toBe(
      'C:\\Users\\u\\AppData\\Local\\sessionkit\\sessions',
    );
    const saved = process.env.XDG_DATA_HOME;
    process.env.XDG_DATA_HOME = '/tmp/sk-xdg-test';
    try {
      if (process.platform === 'linux') {
        expect(new FileStore().dir).toBe('/tmp/sk-xdg-test/sessionkit/sessions');
      }
    } finally {
      if (saved === undefined) delete process.env.XDG_DATA_HOME;
      else process.env.XDG_DATA_HOME = saved;
    }
  });
});

describe('file: URLs', () => {
  it('opens absolute and relative file: URLs through openStore', async () => {
    registerStoreAdapter(storeAdapter);
    const dir = join(fresh(), 'via-url');
    const store = (await openStore(`file://${dir}`)) as unknown as FileStore;
    expect(store).toBeInstanceOf(FileStore);
    expect(store.dir).toBe(dir);
    await store.create({ id: 'u1', title: 'by url' });
    const again = await openStore(`file:${dir}`, { snapshotEvery: 5 });
    expect((await again.load('u1')).title).toBe('by url');
    await again.close();
    await store.close();
    expect(dirFromFileUrl(new URL('file:./sessions'), 'file:./sessions')).toBe(
      resolve(process.cwd(), 'sessions'),
    );
    expect(dirFromFileUrl(new URL('file:../a%20b'), 'file:../a%20b')).toBe(
      resolve(process.cwd(), '..', 'a b'),
    );
    expect(dirFromFileUrl(new URL('file:///abs/p'), 'file:///abs/p')).toBe('/abs/p');
    expect(await codeOf(openStore(`file://${dir}`, { nope: 1 }))).toBe('invalid_argument');
    expect(await codeOf(openStore('file://remote-host/x'))).toBe('invalid_argument');
  });
});

describe('format versions', () => {
  it('reads a format-1 folder, migrates the index, and upgrades sessions on write', async () => {
    const dir = join(fresh(), 'v1');
    cpSync(join(here, 'fixtures', 'format-v1'), dir, { recursive: true });
    const store = new FileStore({ dir });
    const listed = await store.list({ folder: '/projects/legacy' });
    expect(listed.map((s) => s.id)).toEqual(['old-child', 'old-root']);
    const root = await store.load('old-root');
    expect(root).toMatchObject({
      title: 'Written by format 1',
      revision: 3,
      tokenCount: 42,
      metadata: { origin: 'v1' },
      children: ['old-child'],
    });
    expect(root.updatedAt.toISOString()).toBe('2024-03-01T10:05:00.123Z');
    expect(root.messages).toEqual([
      { role: 'user', content: 'hello from the past' },
      { role: 'assistant', content: 'greetings ✓' },
    ]);
    expect((await store.list({ query: 'FROM THE PAST' })).map((s) => s.id)).toEqual(['old-root']);
    const format = JSON.parse(await fsp.readFile(join(dir, 'format.json'), 'utf8'));
    expect(format).toEqual({ format: 'sessionkit-file', version: FORMAT_VERSION });
    // The first write turns the session into a snapshot + log.
    const r = await store.commit('old-root', {
      expectedRevision: 3,
      append: [{ role: 'user', content: 'new' }],
    });
    expect(r.revision).toBe(4);
    const files = readdirSync(join(dir, 'sessions', 'old-root')).sort();
    expect(files).not.toContain('session.json');
    expect(files.some((f) => f.startsWith('snap-'))).toBe(true);
    expect((await store.loadMessages('old-root')).length).toBe(3);
    // The parent moved past the child's branch point: a merge is refused, nothing written.
    expect(await codeOf(store.merge('old-child'))).toBe('merge_diverged');
    expect(
      (await store.commit('old-child', { append: [{ role: 'user', content: 'x' }] })).revision,
    ).toBe(2);
    expect((await store.load('old-child')).parentId).toBe('old-root');
    await store.close();
  });

  it('refuses a folder written by a newer format, and a folder that is not a store', async () => {
    const dir = join(fresh(), 'future');
    await fsp.mkdir(dir, { recursive: true });
    await fsp.writeFile(
      join(dir, 'format.json'),
      JSON.stringify({ format: 'sessionkit-file', version: 99 }),
    );
    const store = new FileStore({ dir });
    const e = await store.list().catch((err: unknown) => err);
    expect(isSessionKitError(e, 'corrupt')).toBe(true);
    expect((e as Error).message).toMatch(/version 99, newer than/);
    await fsp.writeFile(join(dir, 'format.json'), JSON.stringify({ something: 'else' }));
    expect(await codeOf(new FileStore({ dir }).list())).toBe('invalid_argument');
  });
});

describe('options and lifecycle', () => {
  it('rejects unknown and bad options', () => {
    expect(() => new FileStore({ dir: '/tmp/x', bogus: 1 } as never)).toThrow(
      /unknown option "bogus"/,
    );
    expect(() => new FileStore({ dir: '/tmp/x', snapshotEvery: 0 })).toThrow(/snapshotEvery/);
    expect(() => new FileStore({ dir: '' })).toThrow(/dir/);
    expect(() => new FileStore({ dir: '/tmp/x', lockStaleMs: 1 })).toThrow(/lockStaleMs/);
  });

  it('a path that is a file gives invalid_argument, not a raw error', async () => {
    const root = fresh();
    await fsp.writeFile(join(root, 'plain'), 'x');
    expect(await codeOf(new FileStore({ dir: join(root, 'plain') }).list())).toBe(
      'invalid_argument',
    );
  });

  it('close is idempotent and every later call fails with closed', async () => {
    const store = new FileStore({ dir: join(fresh(), 's') });
    await store.create({ id: 'c' });
    await store.close();
    await store.close();
    expect(await codeOf(store.load('c'))).toBe('closed');
    expect(await codeOf(store.list())).toBe('closed');
    expect(await codeOf(store.repair())).toBe('closed');
    // The data is still there for a new instance.
    const reopened = new FileStore({ dir: store.dir });
    expect((await reopened.load('c')).id).toBe('c');
    await reopened.close();
  });

  it('folds the log into a snapshot so a load replays a bounded tail', async () => {
    const dir = join(fresh(), 's');
    const store = new FileStore({ dir, snapshotEvery: 4 });
    await store.create({ id: 'f' });
    for (let i = 0; i < 25; i++)
      await store.commit('f', { append: [{ role: 'user', content: `m${i}` }] });
    const files = readdirSync(join(dir, 'sessions', 'f'));
    const snaps = files.filter((f) => f.startsWith('snap-'));
    const logs = files.filter((f) => f.startsWith('log-'));
    expect(snaps).toHaveLength(1); // older snapshots are removed once a new one is durable
    expect(logs.length).toBeLessThanOrEqual(1);
    expect(Number(snaps[0]!.slice(5, -4))).toBeGreaterThan(1);
    expect((await store.loadMessages('f')).map((m) => (m as { content: string }).content)).toEqual(
      Array.from({ length: 25 }, (_, i) => `m${i}`),
    );
    await store.close();
  });
});
