// Store options as `file:` URL query parameters (url-options.ts).
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { isSessionKitError, openStore } from '@sessionkit/core';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { type FileStore, storeAdapter } from '../src/index.js';
import { codeOf, msg, snapshotsOf, tempFolders } from './helpers.js';

const freshDir = tempFolders().storeDir;

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
