// What the enforceMax fault tests check (kill.test.ts, failover.test.ts): roots of 20
// messages, every other one with a branch of its first 10, pruned while something breaks.

import { expect } from 'vitest';
import type { RedisStore } from '../src/index.js';
import { listEverything } from './harness.js';

/** The messages of root `id` (`fixtures/writer.mjs` writes the same): `<id> m<k>`. */
export const rootMessages = (id: string) =>
  Array.from({ length: 20 }, (_, k) => ({ role: 'user' as const, content: `${id} m${k}` }));

/** Creates `count` roots `<tag>-<i>`, a branch of the first 10 messages of every other one. */
export async function plantRoots(store: RedisStore, tag: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const id = `${tag}-${i}`;
    await store.create({ id, folder: 'prune', title: id, messages: rootMessages(id) });
    if (i % 2 === 0) await store.branch(id, 10);
  }
}

/**
 * Whole: every listed summary equals its session, a root has its 20 messages and a branch
 * its first 10 (a branch keeps its root's title, the root's id), each in order.
 */
export async function expectPrunedWhole(store: RedisStore): Promise<void> {
  const listed = await retryUnavailable(() => listEverything(store));
  expect(listed.length).toBeGreaterThan(0);
  for (const summary of listed) {
    const { messages, ...rest } = await retryUnavailable(() => store.load(summary.id));
    expect(summary).toEqual({ ...rest, messageCount: messages.length });
    const root = summary.title;
    const want = summary.title === summary.id ? 20 : 10;
    expect(messages.map((m) => (m as { content: string }).content)).toEqual(
      Array.from({ length: want }, (_, k) => `${root} m${k}`),
    );
  }
}

/** The roots listed now, newest first. */
export async function rootsOf(store: RedisStore): Promise<string[]> {
  const listed = await retryUnavailable(() => listEverything(store));
  return listed.filter((s) => s.parentId === undefined).map((s) => s.id);
}

/** `run` until it is not `unavailable` (a killed connection reconnects), within 20 s. */
export async function retryUnavailable<T>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await run();
    } catch (e) {
      if ((e as { code?: string }).code !== 'unavailable' || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
