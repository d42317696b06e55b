// Windowed reads (session/window-read.ts, session/history-read.ts): one snapshot, reading
// only the log's tail and the window's bytes of the snapshot (through the offset table).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSessionKitError, type Message } from '@sessionkit/core';
import { windowBounds } from '@sessionkit/core/adapter';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodePrefix, PREFIX_BYTES } from '../src/format/frame.js';
import { FileStore } from '../src/index.js';
import { snapshotsOf, tempFolders } from './helpers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const dist = join(here, '..', 'dist', 'index.js');
const freshDir = tempFolders().storeDir;

const text = (m: unknown) => (m as Message).content as string;
const filler = 'lorem ipsum dolor sit amet '.repeat(8);
const numbered = (from: number, n: number): Message[] =>
  Array.from({ length: n }, (_, i) => ({ role: 'user', content: `m${from + i} ${filler}` }));

/** A session of `n` messages: one big create, then commits so there is a log too. */
async function big(store: FileStore, id: string, n: number): Promise<void> {
  await store.create({ id, messages: numbered(0, n - 20) });
  for (let i = n - 20; i < n; i += 2) await store.commit(id, { append: numbered(i, 2) });
}

describe('windows', () => {
  it('every window equals the slice of the whole history, across snapshot and log', async () => {
    const s = new FileStore({ dir: freshDir(), snapshotEvery: 3 });
    await s.create({ id: 'w', messages: numbered(0, 7) });
    for (let i = 7; i < 40; i += 3) await s.commit('w', { append: numbered(i, 3) });
    await s.commit('w', { patch: { title: 'no messages' } });
    const check = async () => {
      const all = await s.loadMessages('w');
      const rev = (await s.load('w')).revision;
      const windows = [
        { last: 0 },
        { last: 1 },
        { last: 5 },
        { last: 1000 },
        { offset: 0, limit: 1 },
        { offset: 3, limit: 10 },
        { offset: 6, limit: 2 },
        { offset: 20 },
        { offset: all.length },
        { offset: all.length + 5, limit: 3 },
        { limit: 4 },
        {},
      ];
      for (const w of windows) {
        const got = await s.loadMessageWindow('w', w);
        const { start, end } = windowBounds(
          'last' in w
            ? { kind: 'last', last: w.last! }
            : w.offset === undefined && w.limit === undefined
              ? { kind: 'all' }
              : { kind: 'range', offset: w.offset ?? 0, limit: w.limit },
          all.length,
        );
        expect(got).toEqual({
          messages: all.slice(start, end),
          offset: start,
          messageCount: all.length,
          revision: rev,
        });
        expect(await s.loadMessages('w', w)).toEqual(all.slice(start, end));
      }
    };
    await check();
    await s.commit('w', { replace: numbered(100, 4) });
    await check();
    await s.commit('w', { append: numbered(104, 1) });
    await check();
    await s.close();
  });

  it('a window of a long history reads about as many bytes as of a short one', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir, sync: false });
    await big(s, 'long', 10_000);
    await big(s, 'short', 100);
    const bytes = async (id: string, w: { last?: number; offset?: number; limit?: number }) => {
      const r = new FileStore({ dir });
      const before = r.stats.transcriptBytesRead;
      const got = await r.loadMessages(id, w);
      await r.close();
      return { n: got.length, bytes: r.stats.transcriptBytesRead - before, got };
    };
    const snapSize = readFileSync(snapshotsOf(dir, 'long').at(-1)!).length;
    const longLast = await bytes('long', { last: 50 });
    const shortLast = await bytes('short', { last: 50 });
    const middle = await bytes('long', { offset: 5_000, limit: 50 });
    const whole = await bytes('long', {});
    expect(longLast.n).toBe(50);
    expect(text(longLast.got[0])).toMatch(/^m9950 /);
    expect(text(middle.got[0])).toMatch(/^m5000 /);
    expect(whole.bytes).toBeGreaterThanOrEqual(snapSize);
    expect(longLast.bytes).toBeLessThan(snapSize / 20);
    expect(middle.bytes).toBeLessThan(snapSize / 20);
    expect(longLast.bytes).toBeLessThan(shortLast.bytes * 3 + 4096);
    await s.close();
  });

  it('a window never touches the bytes of messages outside it', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    await s.create({ id: 'g', messages: numbered(0, 200) });
    await s.close();
    // Garbage over messages 10..190 of the snapshot (same length): a full load sees the
    // damage, a window of the last messages does not need those bytes.
    const path = snapshotsOf(dir, 'g').at(-1)!;
    const buf = readFileSync(path);
    const prefix = decodePrefix(buf.subarray(0, PREFIX_BYTES))!;
    const bodyStart = PREFIX_BYTES + prefix.metaLen;
    buf.fill(
      0x7a,
      bodyStart + Math.floor(prefix.bodyLen * 0.1),
      bodyStart + Math.floor(prefix.bodyLen * 0.9),
    );
    writeFileSync(path, buf);
    const t = new FileStore({ dir });
    expect((await t.loadMessages('g', { last: 3 })).map(text).map((x) => x.split(' ')[0])).toEqual([
      'm197',
      'm198',
      'm199',
    ]);
    expect(
      (await t.loadMessages('g', { offset: 2, limit: 2 })).map((x) => text(x).split(' ')[0]),
    ).toEqual(['m2', 'm3']);
    // A window over the damage falls back to the whole read, which reports it.
    const e = await t.loadMessages('g', { offset: 100, limit: 1 }).catch((err: unknown) => err);
    expect(isSessionKitError(e, 'corrupt')).toBe(true);
    const full = await t.loadMessages('g').catch((err: unknown) => err);
    expect(isSessionKitError(full, 'corrupt')).toBe(true);
    await t.close();
  });

  it('validates windows before any I/O', async () => {
    const s = new FileStore({ dir: freshDir() });
    for (const w of [{ last: -1 }, { last: 1, offset: 0 }, { offset: 1.5 }, { nope: 1 }]) {
      const e = await s.loadMessages('x', w as never).catch((err: unknown) => err);
      expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
    }
    const e = await s.loadMessageWindow('missing', { last: 2 }).catch((err: unknown) => err);
    expect(isSessionKitError(e, 'not_found')).toBe(true);
    await s.close();
  });
});

describe('windows under another process writing', () => {
  beforeAll(() => {
    if (!existsSync(dist)) throw new Error('run `pnpm --filter @sessionkit/file build` first');
  });

  it('are never torn by commits, replaces and folds of another process', async () => {
    const dir = freshDir();
    const s = new FileStore({ dir });
    await s.create({ id: 'r', messages: [{ role: 'user', content: 'g0:0' }] });
    const child = spawn(
      process.execPath,
      [join(here, 'fixtures', 'window-writer-child.mjs'), dir, 'r', '400'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    let exited = false;
    const done = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => {
        exited = true;
        resolve(code);
      }),
    );
    let reads = 0;
    let k = 0;
    while (!exited) {
      k++;
      const w = k % 3 === 0 ? { offset: k % 40, limit: 6 } : { last: 1 + (k % 7) };
      const got = await s.loadMessageWindow('r', w);
      const parts = got.messages.map((m) => /^g(\d+):(\d+)$/.exec(text(m))!);
      const gens = new Set(parts.map((p) => p[1]));
      expect(gens.size).toBeLessThanOrEqual(1);
      parts.forEach((p, i) => {
        expect(Number(p[2])).toBe(got.offset + i);
      });
      const want =
        'last' in w
          ? Math.min(w.last!, got.messageCount)
          : Math.max(0, Math.min(w.limit, got.messageCount - w.offset));
      expect(got.messages).toHaveLength(want);
      reads++;
      // Window reads are synchronous system calls: let the child's exit event through.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await done, err).toBe(0);
    expect(reads).toBeGreaterThan(20);
    await s.close();
  }, 60_000);
});
