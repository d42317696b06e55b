// Where a log append's fdatasync runs (io/log-syncer.ts): inline for a lone commit on a
// fast disk, in the thread pool when other commits are in progress or the disk is slow.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message } from '@sessionkit/core';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { LogSyncer, type SyncCalls } from '../src/io/log-syncer.js';

/** Fake calls: each inline or pooled fdatasync "takes" the next of `durations` (ms). */
function fakeCalls(durations: number[]) {
  let clock = 0;
  const made: string[] = [];
  let pending: (() => void) | undefined;
  const take = () => durations.shift() ?? 0.1;
  const calls: SyncCalls = {
    inline: (fd) => {
      made.push(`inline ${fd}`);
      if (fd < 0) throw Object.assign(new Error('EIO'), { code: 'EIO' });
      clock += take();
    },
    pooled: (fd) => {
      made.push(`pooled ${fd}`);
      const ms = take();
      return new Promise<void>((resolve) => {
        pending = () => {
          clock += ms;
          resolve();
        };
        queueMicrotask(() => pending?.());
      });
    },
    now: () => clock,
  };
  return { calls, made };
}

describe('LogSyncer', () => {
  it('syncs a lone commit inline while recent fdatasyncs are fast', async () => {
    const stats = { inlineSyncs: 0 };
    const { calls, made } = fakeCalls([0.3, 0.3, 0.3]);
    const syncer = new LogSyncer(1, stats, calls);
    for (let i = 0; i < 3; i++) await syncer.whileCommitting(() => syncer.sync(7));
    expect(made).toEqual(['inline 7', 'inline 7', 'inline 7']);
    expect(stats.inlineSyncs).toBe(3);
  });

  it('uses the thread pool while another commit is in progress', async () => {
    const stats = { inlineSyncs: 0 };
    const { calls, made } = fakeCalls([]);
    const syncer = new LogSyncer(1, stats, calls);
    let release = () => {};
    const other = syncer.whileCommitting(
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    await syncer.whileCommitting(() => syncer.sync(1));
    release();
    await other;
    await syncer.whileCommitting(() => syncer.sync(2));
    expect(made).toEqual(['pooled 1', 'inline 2']);
    expect(stats.inlineSyncs).toBe(1);
  });

  it('moves to the thread pool once the disk is slow, and back once it is fast again', async () => {
    const stats = { inlineSyncs: 0 };
    // One 40 ms fdatasync lifts the running mean (weight 1/8) to 5 ms: pooled until
    // enough fast ones bring it under 1 ms again.
    const { calls, made } = fakeCalls([40, ...Array.from({ length: 20 }, () => 0.2)]);
    const syncer = new LogSyncer(1, stats, calls);
    const kinds: string[] = [];
    for (let i = 0; i < 21; i++) {
      await syncer.whileCommitting(() => syncer.sync(3));
      kinds.push(made[made.length - 1]!.split(' ')[0]!);
    }
    expect(kinds[0]).toBe('inline');
    expect(kinds[1]).toBe('pooled');
    const back = kinds.indexOf('inline', 1);
    expect(back).toBeGreaterThan(5);
    expect(kinds.slice(1, back).every((k) => k === 'pooled')).toBe(true);
    expect(kinds.slice(back).every((k) => k === 'inline')).toBe(true);
  });

  it('comes back inline when pooled fdatasyncs are slow only through the round trip', async () => {
    const stats = { inlineSyncs: 0 };
    // Every fdatasync, inline or pooled, takes 5 ms (limit 1): each pooled one counts as
    // 0.5 ms, so the mean falls back under the limit and an inline one measures the disk
    // again, which sends the next commits to the pool again.
    const { calls, made } = fakeCalls(Array.from({ length: 60 }, () => 5));
    const syncer = new LogSyncer(1, stats, calls);
    for (let i = 0; i < 60; i++) await syncer.whileCommitting(() => syncer.sync(5));
    const kinds = made.map((m) => m.split(' ')[0]);
    const inlineAt = kinds.flatMap((k, i) => (k === 'inline' ? [i] : []));
    expect(inlineAt.filter((i) => i >= 30).length).toBeGreaterThanOrEqual(2);
    expect(inlineAt.length).toBeLessThanOrEqual(15);
    // After an inline 5 ms fdatasync the next commit is pooled (the mean is over 1 ms).
    for (const i of inlineAt.slice(1))
      if (i + 1 < kinds.length) expect(kinds[i + 1]).toBe('pooled');
  });

  it('never syncs inline with a limit of 0; an inline failure rejects', async () => {
    const stats = { inlineSyncs: 0 };
    const { calls, made } = fakeCalls([]);
    const never = new LogSyncer(0, stats, calls);
    await never.whileCommitting(() => never.sync(4));
    expect(made).toEqual(['pooled 4']);
    const inline = new LogSyncer(1, stats, calls);
    await expect(inline.sync(-1)).rejects.toMatchObject({ code: 'EIO' });
    expect(stats.inlineSyncs).toBe(0);
  });
});

describe('FileStore inlineSyncMs', () => {
  const root = mkdtempSync(join(tmpdir(), 'sk-inline-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const turn = (i: number): Message[] => [{ role: 'user', content: `turn ${i}` }];

  it('0 keeps every fdatasync in the thread pool; concurrent commits use it too', async () => {
    const pooled = new FileStore({ dir: join(root, 'pooled'), inlineSyncMs: 0 });
    await pooled.create({ id: 'a' });
    for (let i = 0; i < 5; i++) await pooled.commit('a', { append: turn(i) });
    expect(pooled.stats.inlineSyncs).toBe(0);
    await pooled.close();

    // Generous limit: a lone commit is inline on any disk; eight concurrent are not.
    const store = new FileStore({ dir: join(root, 'auto'), inlineSyncMs: 100 });
    const ids = Array.from({ length: 8 }, (_, i) => `s${i}`);
    for (const id of ids) await store.create({ id });
    await store.commit('s0', { append: turn(0) });
    expect(store.stats.inlineSyncs).toBe(1);
    await Promise.all(ids.map((id) => store.commit(id, { append: turn(1) })));
    expect(store.stats.inlineSyncs).toBeLessThanOrEqual(2);
    for (const id of ids) expect(await store.loadMessages(id)).toHaveLength(id === 's0' ? 2 : 1);
    await store.close();
  });

  it('rejects a limit outside 0 to 100', () => {
    expect(() => new FileStore({ dir: root, inlineSyncMs: -1 })).toThrow(/inlineSyncMs/);
    expect(() => new FileStore({ dir: root, inlineSyncMs: 101 })).toThrow(/inlineSyncMs/);
    expect(() => new FileStore({ dir: root, inlineSyncMs: Number.NaN })).toThrow(/inlineSyncMs/);
    // groupCommitMs shares the range check.
    expect(() => new FileStore({ dir: root, groupCommitMs: 1001 })).toThrow(/groupCommitMs/);
    expect(() => new FileStore({ dir: root, groupCommitMs: 1000 })).not.toThrow();
  });
});
