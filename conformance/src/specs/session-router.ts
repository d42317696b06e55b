import type { FullStore, SessionRouter, Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, sleep } from './util.js';

type R = Store & SessionRouter;

/** Chat-gateway routing: bindings, follow mode, recency. */
export const sessionRouterSpec = defineSpec('session-router', 'SessionRouter', (t) => {
  t.test('bind then resolve returns the session; unknown tuples resolve to ""', async (ctx) => {
    const store = ctx.store as R;
    const a = await createSession(ctx);
    await store.bind('telegram', 'chat-1', '', a.id);
    expect(await store.resolve('telegram', 'chat-1', '', '')).toBe(a.id);
    expect(await store.resolve('telegram', 'chat-2', '', '')).toBe('');
    expect(await store.resolve('discord', 'chat-1', '', '')).toBe('');
    expect(await store.resolve('telegram', 'chat-1', 'thread-9', '')).toBe('');
  });

  t.test('threads and channels are separate bindings; bind replaces', async (ctx) => {
    const store = ctx.store as R;
    const a = await createSession(ctx);
    const b = await createSession(ctx);
    await store.bind('telegram', 'c', 't1', a.id);
    await store.bind('telegram', 'c', 't2', b.id);
    await store.bind('discord', 'c', 't1', b.id);
    expect(await store.resolve('telegram', 'c', 't1', '')).toBe(a.id);
    expect(await store.resolve('telegram', 'c', 't2', '')).toBe(b.id);
    expect(await store.resolve('discord', 'c', 't1', '')).toBe(b.id);
    await store.bind('telegram', 'c', 't1', b.id);
    expect(await store.resolve('telegram', 'c', 't1', '')).toBe(b.id);
  });

  t.test('unbind removes one binding and tolerates a missing one', async (ctx) => {
    const store = ctx.store as R;
    const a = await createSession(ctx);
    await store.bind('slack', 'c', 'x', a.id);
    await store.bind('slack', 'c', 'y', a.id);
    await store.unbind('slack', 'c', 'x');
    await store.unbind('slack', 'c', 'x');
    await store.unbind('slack', 'nobody', '');
    expect(await store.resolve('slack', 'c', 'x', '')).toBe('');
    expect(await store.resolve('slack', 'c', 'y', '')).toBe(a.id);
  });

  t.test('follow "tui" tracks the live session, a pin wins, "" clears', async (ctx) => {
    const store = ctx.store as R;
    const bound = await createSession(ctx);
    const live = await createSession(ctx);
    const pinned = await createSession(ctx);
    await store.bind('telegram', 'c', '', bound.id);
    await store.follow('telegram', 'c', 'tui');
    expect(await store.resolve('telegram', 'c', '', live.id)).toBe(live.id);
    expect(await store.resolve('telegram', 'c', 'any-thread', live.id)).toBe(live.id);
    await store.follow('telegram', 'c', pinned.id);
    expect(await store.resolve('telegram', 'c', '', live.id)).toBe(pinned.id);
    await store.follow('telegram', 'c', '');
    expect(await store.resolve('telegram', 'c', '', live.id)).toBe(bound.id);
  });

  t.test('follow is scoped to its channel and chat', async (ctx) => {
    const store = ctx.store as R;
    const a = await createSession(ctx);
    const b = await createSession(ctx);
    const pinned = await createSession(ctx);
    await store.bind('telegram', 'c', '', a.id);
    await store.bind('discord', 'c', '', b.id);
    await store.bind('telegram', 'other', '', b.id);
    await store.follow('telegram', 'c', pinned.id);
    expect(await store.resolve('telegram', 'c', '', '')).toBe(pinned.id);
    expect(await store.resolve('discord', 'c', '', '')).toBe(b.id);
    expect(await store.resolve('telegram', 'other', '', '')).toBe(b.id);
  });

  t.test('follow with an empty channel fails with invalid_argument', async (ctx) => {
    const store = ctx.store as R;
    const a = await createSession(ctx);
    await expectCode(store.follow('', 'c', 'tui'), 'invalid_argument');
    await expectCode(store.follow('', 'c', a.id), 'invalid_argument');
    expect(await store.resolve('telegram', 'c', '', '')).toBe('');
  });

  t.test('bind to a missing session fails with not_found', async (ctx) => {
    const store = ctx.store as R;
    await expectCode(store.bind('telegram', 'c', '', ctx.id()), 'not_found');
    expect(await store.resolve('telegram', 'c', '', '')).toBe('');
    expect(await store.recent(10)).toEqual([]);
  });

  t.test('recent lists bindings newest first; touch moves one to the front', async (ctx) => {
    const store = ctx.store as R;
    const a = await createSession(ctx);
    const b = await createSession(ctx);
    await store.bind('telegram', 'c1', '', a.id);
    await sleep(2);
    await store.bind('discord', 'c2', 't', b.id);
    let rows = await store.recent(10);
    expect(rows.map((r) => r.sessionId)).toEqual([b.id, a.id]);
    expect(rows[0]).toMatchObject({
      sessionId: b.id,
      channel: 'discord',
      chatKey: 'c2',
      thread: 't',
    });
    expect(rows[0]!.updatedAt).toBeInstanceOf(Date);
    await sleep(2);
    await store.touch('telegram', 'c1', '');
    await store.touch('telegram', 'missing', '');
    rows = await store.recent(10);
    expect(rows.map((r) => r.channel)).toEqual(['telegram', 'discord']);
    expect(rows[0]!.updatedAt.getTime()).toBeGreaterThan(rows[1]!.updatedAt.getTime());
    expect(await store.recent(1)).toHaveLength(1);
    expect(await store.recent(0)).toHaveLength(2);
    await expectCode(store.recent(-1), 'invalid_argument');
    await expectCode(store.recent(1001), 'invalid_argument');
  });

  t.test(
    'a touch or a re-bind moves a binding to the front, in the same millisecond too',
    async (ctx) => {
      const store = ctx.store as R;
      const a = await createSession(ctx);
      for (let i = 0; i < 5; i++) {
        // No pause between the calls: binding times move strictly forward, as updatedAt does.
        await store.bind('telegram', `a${i}`, '', a.id);
        await store.bind('telegram', `b${i}`, '', a.id);
        await store.touch('telegram', `a${i}`, '');
        expect((await store.recent(1))[0]!.chatKey).toBe(`a${i}`);
        await store.bind('telegram', `b${i}`, '', a.id);
        expect((await store.recent(1))[0]!.chatKey).toBe(`b${i}`);
      }
    },
  );

  t.test('recent rows are caller-owned', async (ctx) => {
    const store = ctx.store as R;
    const a = await createSession(ctx);
    await store.bind('telegram', 'c', '', a.id);
    const rows = await store.recent(10);
    rows[0]!.sessionId = 'mutated';
    rows[0]!.updatedAt.setTime(0);
    const again = await store.recent(10);
    expect(again[0]?.sessionId).toBe(a.id);
    expect(again[0]?.updatedAt.getTime()).toBeGreaterThan(0);
  });

  t.test('deleting a session removes its bindings and pins', async (ctx) => {
    const store = ctx.store as R;
    const a = await createSession(ctx);
    const b = await createSession(ctx);
    await store.bind('telegram', 'c', '', a.id);
    await store.bind('telegram', 'c', 'x', a.id);
    await store.bind('telegram', 'd', '', b.id);
    await store.follow('telegram', 'd', a.id);
    expect(await store.resolve('telegram', 'd', '', '')).toBe(a.id);
    await store.delete(a.id);
    expect(await store.resolve('telegram', 'c', '', '')).toBe('');
    expect(await store.resolve('telegram', 'c', 'x', '')).toBe('');
    expect(await store.resolve('telegram', 'd', '', '')).toBe(b.id);
    expect((await store.recent(10)).map((r) => r.sessionId)).toEqual([b.id]);
  });

  t.test('recent without a limit returns the newest 50 bindings', async (ctx) => {
    // DESIGN: recent(limit) newest first; absent or 0 → 50, at most 1000.
    const store = ctx.store as R;
    const a = await createSession(ctx);
    for (let i = 0; i < 60; i++) await store.bind('telegram', `chat-${i}`, '', a.id);
    const all = await store.recent(1000);
    expect(all).toHaveLength(60);
    expect(await store.recent()).toEqual(all.slice(0, 50));
    expect(await store.recent(0)).toEqual(all.slice(0, 50));
    expect(await store.recent(51)).toEqual(all.slice(0, 51));
    // Newest first: every row is at least as new as the next one.
    for (let i = 1; i < all.length; i++) {
      expect(all[i - 1]!.updatedAt.getTime()).toBeGreaterThanOrEqual(all[i]!.updatedAt.getTime());
    }
  });

  t.test('re-binding a tuple sets its time to now and moves it to the front', async (ctx) => {
    // DESIGN: bind needs an existing session and re-binding sets the time to now.
    const store = ctx.store as R;
    const a = await createSession(ctx);
    const b = await createSession(ctx);
    await store.bind('telegram', 'first', '', a.id);
    await sleep(2);
    await store.bind('telegram', 'second', '', b.id);
    const before = await store.recent(10);
    expect(before.map((r) => r.chatKey)).toEqual(['second', 'first']);
    await sleep(2);
    await store.bind('telegram', 'first', '', a.id);
    const same = await store.recent(10);
    expect(same.map((r) => r.chatKey)).toEqual(['first', 'second']);
    expect(same[0]!.updatedAt.getTime()).toBeGreaterThan(before[0]!.updatedAt.getTime());
    await sleep(2);
    await store.bind('telegram', 'second', '', a.id);
    const moved = await store.recent(10);
    expect(moved.map((r) => [r.chatKey, r.sessionId])).toEqual([
      ['second', a.id],
      ['first', a.id],
    ]);
    expect(moved[0]!.updatedAt.getTime()).toBeGreaterThan(same[0]!.updatedAt.getTime());
  });

  t.test('unbind removes the row from recent', async (ctx) => {
    // DESIGN: unbind — the row is gone, also from recent.
    const store = ctx.store as R;
    const a = await createSession(ctx);
    await store.bind('slack', 'c', 'x', a.id);
    await sleep(2);
    await store.bind('slack', 'c', 'y', a.id);
    await store.unbind('slack', 'c', 'y');
    const rows = await store.recent(10);
    expect(rows.map((r) => [r.channel, r.chatKey, r.thread, r.sessionId])).toEqual([
      ['slack', 'c', 'x', a.id],
    ]);
    await store.unbind('slack', 'c', 'x');
    expect(await store.recent(10)).toEqual([]);
    expect(await store.recent()).toEqual([]);
  });

  t.test('follow "tui" with an empty live session id resolves to the binding', async (ctx) => {
    // "tui" follows liveSessionId; when the TUI has no session open (liveSessionId ""),
    // core's resolve rule (resolveRoute) falls back to the tuple's binding, or "".
    const store = ctx.store as R;
    const bound = await createSession(ctx);
    const live = await createSession(ctx);
    await store.bind('telegram', 'c', '', bound.id);
    await store.follow('telegram', 'c', 'tui');
    expect(await store.resolve('telegram', 'c', '', '')).toBe(bound.id);
    expect(await store.resolve('telegram', 'c', 'unbound-thread', '')).toBe('');
    expect(await store.resolve('telegram', 'c', '', live.id)).toBe(live.id);
    expect(await store.resolve('telegram', 'c', 'unbound-thread', live.id)).toBe(live.id);
  });

  t.test('resolve and follow reject malformed session ids', async (ctx) => {
    // DESIGN: every method validates ids (invalid_argument before any I/O); a follow
    // target is "", "tui" or a session id; liveSessionId is "" or a session id.
    const store = ctx.store as R;
    const a = await createSession(ctx);
    await store.bind('telegram', 'c', '', a.id);
    for (const bad of ['../x', 'a/b', '.hidden', 'x'.repeat(129), 'nul\u0000']) {
      await expectCode(store.resolve('telegram', 'c', '', bad), 'invalid_argument');
      await expectCode(store.follow('telegram', 'c', bad), 'invalid_argument');
    }
    expect(await store.resolve('telegram', 'c', '', '')).toBe(a.id);
    await store.follow('telegram', 'c', 'tui');
    await store.follow('telegram', 'c', '');
    expect(await store.resolve('telegram', 'c', '', a.id)).toBe(a.id);
  });

  t.test('deleting a session keeps the bindings and pins of other sessions', async (ctx) => {
    // DESIGN: deleting a session removes ITS bindings and the follow pins that name it.
    const store = ctx.store as R;
    const a = await createSession(ctx);
    const b = await createSession(ctx);
    const live = await createSession(ctx);
    await store.bind('telegram', 'c', '', a.id);
    await store.bind('telegram', 'd', '', b.id);
    await store.follow('telegram', 'd', b.id);
    await store.follow('telegram', 'e', 'tui');
    await store.follow('telegram', 'f', a.id);
    await store.delete(a.id);
    expect(await store.resolve('telegram', 'd', '', '')).toBe(b.id);
    expect(await store.resolve('telegram', 'e', '', live.id)).toBe(live.id);
    expect(await store.resolve('telegram', 'f', '', '')).toBe('');
    expect((await store.recent()).map((r) => r.sessionId)).toEqual([b.id]);
  });

  t.test('router keys round-trip unicode and SQL-looking text literally', async (ctx) => {
    const store = ctx.store as R;
    const a = await createSession(ctx);
    const key = "chat'; DROP TABLE sessions; -- 🚀";
    await store.bind('tg:%_*', key, '{thread}', a.id);
    expect(await store.resolve('tg:%_*', key, '{thread}', '')).toBe(a.id);
    expect(await store.resolve('tg:%_*', 'chat', '{thread}', '')).toBe('');
    expect((await store.recent(5))[0]).toMatchObject({
      channel: 'tg:%_*',
      chatKey: key,
      thread: '{thread}',
    });
  });

  t.test('touch moves only the named thread to the front', async (ctx) => {
    // DESIGN: touch bumps the binding's time (one binding: channel, chatKey and thread).
    const store = ctx.store as FullStore;
    const a = await createSession(ctx);
    const b = await createSession(ctx);
    await store.bind('telegram', 'c', 't1', a.id);
    await store.bind('telegram', 'c', 't2', b.id);
    await store.bind('telegram', 'other', '', b.id);
    await store.touch('telegram', 'c', 't1');
    const rows = (await store.recent(1000)).filter(
      (r) => r.sessionId === a.id || r.sessionId === b.id,
    );
    expect(rows.map((r) => `${r.chatKey}/${r.thread}`)).toEqual(['c/t1', 'other/', 'c/t2']);
  });
});
