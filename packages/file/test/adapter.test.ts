import { join, resolve } from 'node:path';
import { openStore } from '@sessionkit/core';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { dirFromFileUrl, FileStore, storeAdapter } from '../src/index.js';
import { codeOf, tempFolders } from './helpers.js';

const folders = tempFolders();
const fresh = folders.root;

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
