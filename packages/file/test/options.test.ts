// Store options and lifecycle (options.ts, store.ts): bad options, unusable folders, close.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { codeOf, tempFolders } from './helpers.js';

const folders = tempFolders();
const fresh = folders.root;

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
});
