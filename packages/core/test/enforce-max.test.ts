import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compareListOrder } from '../src/adapter.js';
import {
  enforceMax,
  isSessionKitError,
  type ListCursor,
  type ListOptions,
  type Pruner,
  type SessionSummary,
} from '../src/index.js';
import { FakeStore } from './fixtures/fake-store.js';

const BASE = Date.UTC(2025, 0, 1);

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sessionkit-enforce-max-test-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** The `code` a promise rejects with (`undefined` when it resolves or throws a non-sessionkit error). */
async function rejectionCode(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return isSessionKitError(e) ? e.code : `not a SessionKitError: ${String(e)}`;
  }
  return undefined;
}

/** `count` roots `r00`, `r01` … where a higher number is newer; every 3 share a millisecond. */
async function storeWithRoots(count: number, maxPageSize?: number): Promise<FakeStore> {
  const store = new FakeStore(maxPageSize === undefined ? {} : { maxPageSize });
  for (let i = 0; i < count; i++) {
    await store.create({
      id: `r${String(i).padStart(2, '0')}`,
      updatedAt: new Date(BASE + Math.floor(i / 3) * 1000),
    });
  }
  return store;
}

/** The `n` newest of `r00 … r{count-1}`, newest first. */
function newestRoots(count: number, n: number): string[] {
  return Array.from({ length: n }, (_, k) => `r${String(count - 1 - k).padStart(2, '0')}`);
}

/**
 * Runs `fn` once, at the first `list` call of enforceMax's second pass: the first call
 * whose cursor goes back up the listing instead of continuing down it.
 */
function atSecondPass(store: FakeStore, fn: () => void | Promise<void>): void {
  let last: ListCursor | undefined;
  let done = false;
  store.hooks.beforeList = async (options: ListOptions | undefined) => {
    const cursor = options?.startAfter;
    if (!done && cursor && last && compareListOrder(cursor, last, false) < 0) {
      done = true;
      await fn();
    }
    if (cursor) last = cursor;
  };
}

describe('enforceMax (generic two-pass path)', () => {
  it('keeps the newest max roots, across pages and equal timestamps, and deletes the rest', async () => {
    const store = await storeWithRoots(14, 3);
    // Archived sessions are roots too.
    await store.create({
      id: 'archived-old',
      updatedAt: new Date(BASE - 5000),
      archivedAt: new Date(BASE),
    });
    const deleted = await enforceMax(store, 5, { pageSize: 3, tmpDir: tmp });
    expect(deleted).toBe(10);
    expect(store.ids()).toEqual(newestRoots(14, 5));
    expect(store.counts.delete).toBe(10);
    expect(store.counts.load).toBe(0);
  });

  it('deletes nothing when there are at most max roots', async () => {
    const store = await storeWithRoots(4);
    expect(await enforceMax(store, 4, { tmpDir: tmp })).toBe(0);
    expect(await enforceMax(store, 10, { tmpDir: tmp })).toBe(0);
    expect(store.size).toBe(4);
    expect(store.counts.delete).toBe(0);
  });

  it('never selects sub-sessions, even the oldest, and promotes children of deleted roots', async () => {
    const store = await storeWithRoots(6, 2);
    // Children older than every root: by age alone they would go first.
    await store.create({ id: 'child-of-r00', parentId: 'r00', updatedAt: new Date(BASE - 9000) });
    await store.create({ id: 'child-of-r05', parentId: 'r05', updatedAt: new Date(BASE - 8000) });
    await store.create({
      id: 'grandchild',
      parentId: 'child-of-r00',
      updatedAt: new Date(BASE - 7000),
    });

    const deleted = await enforceMax(store, 2, { pageSize: 2, tmpDir: tmp });

    expect(deleted).toBe(4);
    expect(store.ids()).toEqual(['r05', 'r04', 'grandchild', 'child-of-r05', 'child-of-r00']);
    // r00 was deleted: its child became a root (promotion is the store's policy).
    expect((await store.load('child-of-r00')).parentId).toBeUndefined();
    expect((await store.load('grandchild')).parentId).toBe('child-of-r00');
    expect((await store.load('r05')).children).toEqual(['child-of-r05']);
  });

  it('treats max <= 0 as unlimited and does no I/O', async () => {
    const store = await storeWithRoots(5);
    expect(await enforceMax(store, 0)).toBe(0);
    expect(await enforceMax(store, -3)).toBe(0);
    expect(store.size).toBe(5);
    expect(store.counts.list).toBe(0);
    expect(store.counts.delete).toBe(0);
  });

  it('uses the native Pruner when the store has one', async () => {
    class PruningStore extends FakeStore implements Pruner {
      readonly calls: number[] = [];
      async enforceMax(max: number): Promise<number> {
        this.calls.push(max);
        return 42;
      }
    }
    const store = new PruningStore();
    await store.create({ id: 'a' });
    expect(await enforceMax(store, 3)).toBe(42);
    expect(store.calls).toEqual([3]);
    expect(store.counts.list).toBe(0);
    expect(store.counts.delete).toBe(0);
    // max <= 0 is unlimited before any backend is asked.
    expect(await enforceMax(store, 0)).toBe(0);
    expect(store.calls).toEqual([3]);
  });

  it('skips a candidate that was updated between the passes', async () => {
    const store = await storeWithRoots(8, 2);
    atSecondPass(store, () => store.touch('r02'));
    const deleted = await enforceMax(store, 3, { pageSize: 2, tmpDir: tmp });
    // Candidates were r04 … r00; r02 changed, so it stays (now the newest).
    expect(deleted).toBe(4);
    expect(store.ids()).toEqual(['r02', 'r07', 'r06', 'r05']);
  });

  it('skips the first candidate when it was updated between the passes', async () => {
    const store = await storeWithRoots(6, 2);
    atSecondPass(store, () => store.touch('r03'));
    expect(await enforceMax(store, 2, { pageSize: 2, tmpDir: tmp })).toBe(3);
    expect(store.ids()).toEqual(['r03', 'r05', 'r04']);
  });

  it('skips candidates that vanished, before the second pass or right before their delete', async () => {
    const store = await storeWithRoots(8, 2);
    atSecondPass(store, () => store.delete('r01'));
    // Someone else deletes r03 between the listing and our delete: not_found is skipped.
    let raced = false;
    store.hooks.beforeDelete = async (id) => {
      if (id === 'r03' && !raced) {
        raced = true;
        await store.delete('r03');
      }
    };
    const deleted = await enforceMax(store, 3, { pageSize: 2, tmpDir: tmp });
    // Candidates r04 … r00: r01 and r03 were deleted by others.
    expect(deleted).toBe(3);
    expect(store.ids()).toEqual(['r07', 'r06', 'r05']);
  });

  it('never calls load', async () => {
    const store = await storeWithRoots(10);
    store.hooks.beforeLoad = () => {
      throw new Error('enforceMax must not read message bodies');
    };
    expect(await enforceMax(store, 1, { pageSize: 4, tmpDir: tmp })).toBe(9);
    expect(store.counts.load).toBe(0);
  });

  it('keeps its spool private and removes it afterwards', async () => {
    const store = await storeWithRoots(6);
    const seen: { folderMode: number; fileModes: number[] }[] = [];
    store.hooks.beforeDelete = async () => {
      if (seen.length > 0) return;
      const [folder, ...others] = await readdir(tmp);
      expect(others).toEqual([]);
      const path = join(tmp, folder!);
      const files = await readdir(path);
      seen.push({
        folderMode: (await stat(path)).mode & 0o777,
        fileModes: await Promise.all(
          files.map(async (f) => (await stat(join(path, f))).mode & 0o777),
        ),
      });
    };
    expect(await enforceMax(store, 2, { tmpDir: tmp })).toBe(4);
    expect(seen).toEqual([{ folderMode: 0o700, fileModes: [0o600] }]);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('removes the spool when a delete fails, and lets the error through', async () => {
    const store = await storeWithRoots(6);
    store.hooks.beforeDelete = (_id, call) => {
      if (call === 2) throw new Error('disk on fire');
    };
    await expect(enforceMax(store, 2, { tmpDir: tmp })).rejects.toThrow('disk on fire');
    expect(store.size).toBe(5);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('removes the spool when the listing fails in either pass', async () => {
    for (const failAt of [2, 5, 6]) {
      const store = await storeWithRoots(6, 2);
      store.hooks.beforeList = (_o, call) => {
        if (call === failAt) throw new Error(`list ${call} failed`);
      };
      await expect(enforceMax(store, 1, { pageSize: 2, tmpDir: tmp })).rejects.toThrow(
        `list ${failAt} failed`,
      );
      expect(await readdir(tmp)).toEqual([]);
    }
  });

  it('reports a store whose cursor does not advance instead of looping', async () => {
    const store = await storeWithRoots(6, 2);
    const list = store.list.bind(store);
    // Ignores startAfter: always the first page.
    store.list = (options?: ListOptions): Promise<SessionSummary[]> =>
      list({ ...options, startAfter: undefined });
    expect(await rejectionCode(enforceMax(store, 1, { pageSize: 2, tmpDir: tmp }))).toBe('corrupt');
    expect(store.size).toBe(6);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('reports a store that lists a page out of order, naming enforceMax', async () => {
    const store = await storeWithRoots(6, 3);
    const list = store.list.bind(store);
    store.list = async (options?: ListOptions): Promise<SessionSummary[]> =>
      (await list(options)).reverse();
    let message = '';
    try {
      await enforceMax(store, 1, { pageSize: 3, tmpDir: tmp });
    } catch (e) {
      expect(isSessionKitError(e, 'corrupt')).toBe(true);
      message = (e as Error).message;
    }
    expect(message).toMatch(/enforceMax: the store listed "r\d\d" out of order/);
    expect(store.size).toBe(6);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('rejects a bad max or bad options with invalid_argument before any I/O', async () => {
    const store = await storeWithRoots(3);
    const bad: [unknown, unknown][] = [
      [1.5, {}],
      [Number.NaN, {}],
      [Number.POSITIVE_INFINITY, {}],
      ['3', {}],
      [undefined, {}],
      [2, { pageSize: 0 }],
      [2, { pageSize: 1001 }],
      [2, { pageSize: 2.5 }],
      [2, { tmpDir: '' }],
      [2, { tmpDir: 7 }],
      [2, { pageSize: 10, extra: true }],
      [2, 'options'],
    ];
    for (const [max, options] of bad) {
      const code = await rejectionCode(
        enforceMax(store, max as number, options as { pageSize?: number }),
      );
      expect(code, `enforceMax(${String(max)}, ${JSON.stringify(options)})`).toBe(
        'invalid_argument',
      );
    }
    expect(store.counts.list).toBe(0);
    expect(store.size).toBe(3);
  });

  it('rejects a tmpDir that does not exist with invalid_argument and deletes nothing', async () => {
    const store = await storeWithRoots(3);
    const missing = join(tmp, 'no', 'such', 'folder');
    expect(await rejectionCode(enforceMax(store, 1, { tmpDir: missing }))).toBe('invalid_argument');
    expect(store.size).toBe(3);
  });
});

describe('enforceMax memory', () => {
  it('stays flat over 200,000 roots with 100-char ids in pages of 1000', async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    expect(typeof gc, 'run vitest with --expose-gc (see vitest.config.ts)').toBe('function');
    // V8 heap plus memory held outside it (Buffers, external strings): both would grow.
    const retainedHeap = (): number => {
      gc!();
      const { heapUsed, external } = process.memoryUsage();
      return heapUsed + external;
    };

    const N = 200_000;
    const KEEP = 1000;
    const PAGE = 1000;
    const idOf = (i: number) => `${'s'.repeat(88)}-${String(i).padStart(11, '0')}`;
    expect(idOf(0)).toHaveLength(100);
    const store = new FakeStore({ maxPageSize: PAGE });
    store.seed(
      (function* () {
        for (let i = 0; i < N; i++) yield { id: idOf(i), updatedAt: BASE + i };
      })(),
    );

    // Reference: what merely holding the candidates' ids costs, collected the way a naive
    // implementation would (from the listing, whose ids are fresh strings as a backend's
    // would be). 199,000 × (100 chars + string header + array slot) ≈ 25 MB.
    const before = retainedHeap();
    let held: string[] | undefined = [];
    let cursor: ListCursor | undefined;
    for (;;) {
      const page = await store.list({ includeArchived: true, limit: PAGE, startAfter: cursor });
      for (const s of page) held.push(s.id);
      const last = page.at(-1);
      if (page.length < PAGE || !last) break;
      cursor = { updatedAt: last.updatedAt, id: last.id };
    }
    held = held.slice(KEEP);
    const idsCost = retainedHeap() - before;
    expect(held).toHaveLength(N - KEEP);
    held = undefined;

    // The bound. A correct run holds O(page) at a time: one or two pages of 1000 summaries
    // (an object with ~18 fields, two Dates, a metadata object, a children array and a
    // 100-char id: well under 1 KB each, so < 2 MB) plus stream buffers (64 KB chunks).
    // 6 MB leaves room for GC noise, and holding the ids alone (idsCost, measured above)
    // costs several times that, so an implementation that keeps candidates in memory fails.
    const BOUND = 6 * 1024 * 1024;
    expect(idsCost).toBeGreaterThan(3 * BOUND);

    const baseline = retainedHeap();
    let peak = 0;
    let samples = 0;
    const listCallsBefore = store.counts.list;
    store.hooks.beforeList = (_options, call) => {
      // Sampling every 8th page (~50 samples over ~400 list calls) keeps the collections'
      // cost down; what a leak holds only grows during pass 1 (page 200 is its last full
      // one and is sampled), so the peak is still seen.
      if ((call - listCallsBefore) % 8 !== 0) return;
      samples++;
      peak = Math.max(peak, retainedHeap() - baseline);
    };

    const deleted = await enforceMax(store, KEEP, { pageSize: PAGE, tmpDir: tmp });
    store.hooks.beforeList = undefined;

    console.info(
      `enforceMax heap: ids alone ${(idsCost / 2 ** 20).toFixed(1)} MiB, ` +
        `peak growth ${(peak / 2 ** 20).toFixed(2)} MiB over ${samples} samples, ` +
        `bound ${(BOUND / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(deleted).toBe(N - KEEP);
    expect(store.size).toBe(KEEP);
    expect(store.ids()).toEqual(Array.from({ length: KEEP }, (_, k) => idOf(N - 1 - k)));
    expect(store.counts.load).toBe(0);
    expect(samples).toBeGreaterThan(40);
    expect(peak).toBeLessThan(BOUND);
    expect(await readdir(tmp)).toEqual([]);
  }, 240_000); // 200,000 sessions seeded and paged: a bounded memory test, not a timing one
});
