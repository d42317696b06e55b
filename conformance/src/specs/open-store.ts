// openStore(url): an adapter's URL opens the same contracts as its constructor, stores
// opened from one URL share their data, and a URL or an option the adapter does not know is
// an error rather than something silently ignored. Runs when the initializer gives
// `openUrl`.
import { detectCapabilities, isSessionKitError, openStore, type Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec, type TestContext } from '../harness.js';
import { createSession, expectCode, turns } from './util.js';

/** The initializer's URL, or a skip when it has none. */
async function urlOf(ctx: TestContext): Promise<string> {
  const openUrl = ctx.init.openUrl;
  if (!openUrl) return ctx.skip('needs openUrl');
  const url = await openUrl();
  if (typeof url !== 'string' || url === '') throw new Error('openUrl() must return a URL string');
  return url;
}

/** Runs `fn` with stores opened from `url`, closing every one afterwards. */
async function withOpened<T>(urls: string[], fn: (stores: Store[]) => Promise<T>): Promise<T> {
  const stores: Store[] = [];
  try {
    for (const url of urls) stores.push(await openStore(url));
    return await fn(stores);
  } finally {
    for (const s of stores) await s.close().catch(() => {});
  }
}

/** `url` with one more query parameter. */
function withQuery(url: string, param: string): string {
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  return `${base}${base.includes('?') ? '&' : '?'}${param}${hash === -1 ? '' : url.slice(hash)}`;
}

export const openStoreSpec = defineSpec('open-store', 'Store', (t) => {
  t.test(
    'stores opened from one URL share their data and the capabilities of create()',
    async (ctx) => {
      const url = await urlOf(ctx);
      await withOpened([url, url], async ([first, second]) => {
        expect(detectCapabilities(first!)).toEqual(detectCapabilities(ctx.store));
        const folder = ctx.folder();
        const id = ctx.id();
        const created = await first!.create({ id, folder, title: 'opened', messages: turns(2) });
        expect(await second!.load(id)).toEqual(created);
        expect((await second!.list({ folder })).map((s) => s.id)).toEqual([id]);
        await second!.delete(id);
        await expectCode(first!.load(id), 'not_found');
      });
    },
  );

  t.test('a URL opens data of its own: what the test store holds is not there', async (ctx) => {
    const url = await urlOf(ctx);
    const mine = await createSession(ctx, { folder: ctx.folder() });
    await withOpened([url], async ([opened]) => {
      await expectCode(opened!.load(mine.id), 'not_found');
    });
  });

  t.test('an unknown URL option is invalid_argument naming it, not ignored', async (ctx) => {
    const url = await urlOf(ctx);
    const bad = withQuery(url, 'skUnknownOption=1');
    let error: unknown;
    try {
      await withOpened([bad], async () => {});
    } catch (e) {
      error = e;
    }
    expect(isSessionKitError(error, 'invalid_argument'), String(error)).toBe(true);
    expect((error as Error).message).toContain('skUnknownOption');
  });

  t.test('an unknown key of openStore options is invalid_argument naming it', async (ctx) => {
    const url = await urlOf(ctx);
    const error = await expectCode(openStore(url, { skUnknownKey: 1 }), 'invalid_argument');
    expect(error.message).toContain('skUnknownKey');
  });

  t.test('a store opened from a URL fails with closed after close()', async (ctx) => {
    const url = await urlOf(ctx);
    const store = await openStore(url);
    await store.close();
    await store.close(); // idempotent
    await expectCode(store.list({}), 'closed');
  });
});
