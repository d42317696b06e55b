// Committer: truncate. Keep the first n messages, drop the rest, then append, in one atomic
// step; a drop is a history rewrite for merge; windows, search and listing follow.
import type { Brancher, Committer, HistoryReader, Message, Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import {
  createSession,
  expectCode,
  expectListedAsLoaded,
  inBackground,
  msg,
  race,
  searchIn,
  tally,
  tick,
  turns,
} from './util.js';

type C = Store & Committer;
const numbered = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => msg('user', `m${from + i}`));

export const truncateSpec = defineSpec('truncate', 'Committer', (t) => {
  t.test('truncate keeps the first n messages, then appends, in one commit', async (ctx) => {
    const store = ctx.store as C;
    const s = await createSession(ctx, { messages: numbered(0, 6) });
    const r = await store.commit(s.id, {
      truncate: 4,
      append: [msg('assistant', 'new tail')],
      increment: { turnCount: 1 },
      patch: { status: 'edited' },
    });
    expect(r).toMatchObject({ revision: 2, messageCount: 5 });
    const loaded = await expectListedAsLoaded(store, s.id);
    expect(loaded.messages).toEqual([...numbered(0, 4), msg('assistant', 'new tail')]);
    expect(loaded).toMatchObject({ turnCount: 1, status: 'edited', revision: 2 });
  });

  t.test('truncate at 0 empties the history; at messageCount it only appends', async (ctx) => {
    const store = ctx.store as C;
    const s = await createSession(ctx, { messages: numbered(0, 3) });
    expect((await store.commit(s.id, { truncate: 3 })).messageCount).toBe(3);
    expect((await store.load(s.id)).messages).toEqual(numbered(0, 3));
    const appended = await store.commit(s.id, { truncate: 3, append: numbered(3, 5) });
    expect(appended).toMatchObject({ revision: 3, messageCount: 5 });
    expect((await store.commit(s.id, { truncate: 0 })).messageCount).toBe(0);
    expect(await expectListedAsLoaded(store, s.id)).toMatchObject({ messages: [], revision: 4 });
    await store.commit(s.id, { truncate: 0, append: [msg('user', 'fresh')] });
    expect((await store.load(s.id)).messages).toEqual([msg('user', 'fresh')]);
  });

  t.test('truncate past the history is invalid_argument and writes nothing', async (ctx) => {
    const store = ctx.store as C;
    const s = await createSession(ctx, { messages: numbered(0, 3) });
    const e = await expectCode(store.commit(s.id, { truncate: 4 }), 'invalid_argument');
    expect(e.message).toMatch(/truncate/);
    await expectCode(
      store.commit(s.id, { truncate: 4, append: [msg('user', 'x')], increment: { turnCount: 1 } }),
      'invalid_argument',
    );
    for (const bad of [-1, 1.5, Number.NaN, '2', null]) {
      await expectCode(store.commit(s.id, { truncate: bad as never }), 'invalid_argument');
    }
    await expectCode(store.commit(s.id, { truncate: 1, replace: [] }), 'invalid_argument');
    const loaded = await store.load(s.id);
    expect(loaded.messages).toEqual(numbered(0, 3));
    expect(loaded.revision).toBe(1);
    expect(loaded.turnCount).toBe(0);
  });

  t.test('truncate honours expectations: a stale one conflicts and drops nothing', async (ctx) => {
    const store = ctx.store as C;
    const peer = (await ctx.peer()) as C;
    const s = await createSession(ctx, { messages: numbered(0, 4) });
    const pops = await race(
      Array.from(
        { length: 4 },
        (_, i) => () =>
          (i % 2 ? peer : store).commit(s.id, { expectedMessageCount: 4, truncate: 3 }),
      ),
    );
    expect(tally(pops)).toEqual({ ok: 1, conflict: 3 });
    expect((await store.load(s.id)).messages).toEqual(numbered(0, 3));
  });

  t.test('concurrent pops without expectations each drop one message', async (ctx) => {
    // Each pop reads the count in its own atomic step: n pops of one message from n + 2
    // leave 2, none lost and none doubled.
    const store = ctx.store as C;
    const peer = (await ctx.peer()) as C;
    const s = await createSession(ctx, { messages: numbered(0, 8) });
    const pop = async (c: C) => {
      for (;;) {
        const count = (await c.load(s.id)).messages.length;
        try {
          return await c.commit(s.id, { expectedMessageCount: count, truncate: count - 1 });
        } catch (e) {
          if ((e as { code?: string }).code !== 'conflict') throw e;
        }
      }
    };
    const results = await race(
      Array.from({ length: 6 }, (_, i) => () => pop(i % 2 ? peer : store)),
    );
    expect(tally(results)).toEqual({ ok: 6 });
    expect((await store.load(s.id)).messages).toEqual(numbered(0, 2));
  });

  t.testFor(
    'Brancher',
    'dropping a message is a history rewrite: a branch taken before it no longer merges',
    async (ctx) => {
      const store = ctx.store as C & Brancher;
      const parent = await createSession(ctx, { messages: numbered(0, 4) });
      const kept = await store.branch(parent.id, 4);
      const dropped = await store.branch(parent.id, 4);
      // Dropping nothing (truncate at the count) is an append, not a rewrite.
      await store.commit(parent.id, { truncate: 4 });
      await store.commit(kept.id, { append: [msg('user', 'branch')] });
      expect((await store.merge(kept.id)).messages).toHaveLength(5);
      // Dropping one and putting back one just like it still rewrote the history.
      await store.commit(parent.id, { truncate: 4, append: [msg('user', 'branch')] });
      await store.commit(parent.id, { truncate: 4 });
      const before = await store.load(parent.id);
      const again = await store.branch(parent.id, 4);
      await store.commit(parent.id, { truncate: 3, append: [msg('user', 'm3')] });
      await store.commit(dropped.id, { append: [msg('user', 'late')] });
      await expectCode(store.merge(again.id), 'merge_diverged');
      await expectCode(store.merge(dropped.id), 'merge_diverged');
      expect((await store.load(parent.id)).revision).toBe(before.revision + 1);
    },
    { requires: ['Committer'] },
  );

  t.testFor(
    'HistoryReader',
    'windows and loadMessages are never torn by concurrent truncations',
    async (ctx) => {
      const store = ctx.store as C & HistoryReader;
      const reader = (await ctx.peer()) as C & HistoryReader;
      // Every history a commit makes is recorded before it is committed; each round drops
      // at least the last message and appends three of its own, so no history — and no
      // half-done truncation — equals another. Every read must be one of them, or a slice.
      const base = numbered(0, 20);
      const histories: Message[][] = [base];
      const s = await createSession(ctx, { messages: base });
      const writer = inBackground(async () => {
        let current = base;
        for (let round = 0; round < 12; round++) {
          const keep = current.length - 1 - (round % 3);
          const added = [0, 1, 2].map((i) => msg('user', `r${round}:${i}`));
          current = [...current.slice(0, keep), ...added];
          histories.push(current);
          await store.commit(s.id, { truncate: keep, append: added });
        }
      });
      const same = (a: Message[], b: Message[]) => JSON.stringify(a) === JSON.stringify(b);
      const oneOf = (what: string, read: Message[], cut: (h: Message[]) => Message[]) =>
        expect(
          histories.some((h) => same(cut(h), read)),
          `${what}: ${JSON.stringify(read)}`,
        ).toBe(true);
      let reads = 0;
      while (!writer.done) {
        oneOf('loadMessages', await reader.loadMessages(s.id), (h) => h);
        oneOf('{last: 5}', await reader.loadMessages(s.id, { last: 5 }), (h) => h.slice(-5));
        oneOf('{offset: 16}', await reader.loadMessages(s.id, { offset: 16 }), (h) => h.slice(16));
        reads++;
        await tick();
      }
      await writer.finished;
      expect(reads).toBeGreaterThan(0);
      expect(await reader.loadMessages(s.id)).toEqual(histories.at(-1));
    },
    { requires: ['Committer'], timeoutFactor: 2 },
  );

  t.test('search follows truncation: dropped text is no longer found', async (ctx) => {
    const store = ctx.store as C;
    const folder = ctx.folder();
    const s = await createSession(ctx, {
      folder,
      messages: [msg('user', 'keep the walrus'), msg('assistant', 'drop the narwhal')],
    });
    const found = searchIn(store, folder);
    expect(await found('narwhal')).toEqual([s.id]);
    await store.commit(s.id, { truncate: 1, append: [msg('assistant', 'add the dugong')] });
    expect(await found('narwhal')).toEqual([]);
    expect(await found('walrus')).toEqual([s.id]);
    expect(await found('dugong')).toEqual([s.id]);
    await store.commit(s.id, { truncate: 0 });
    expect(await found('walrus')).toEqual([]);
    expect(await found('dugong')).toEqual([]);
  });

  t.testFor(
    'Brancher',
    'a clone and a merged parent keep their own text when their source is truncated',
    async (ctx) => {
      const store = ctx.store as C & Brancher;
      const folder = ctx.folder();
      const found = searchIn(store, folder);
      const source = await createSession(ctx, {
        folder,
        messages: [msg('user', 'the civet'), msg('assistant', 'the serval')],
      });
      const copy = await store.clone(source.id);
      const branch = await store.branch(source.id, 2);
      await store.commit(branch.id, { append: [msg('user', 'the genet')] });
      const parent = await store.merge(branch.id);
      expect(parent.id).toBe(source.id);
      // Truncating the branch after the merge, and the source after the clone, changes
      // only what was truncated.
      await store.commit(branch.id, { truncate: 0 });
      expect(await found('genet')).toEqual([source.id]);
      await store.commit(source.id, { truncate: 0 });
      expect(await found('serval')).toEqual([copy.id]);
      expect(await found('civet')).toEqual([copy.id]);
      expect(await found('genet')).toEqual([]);
    },
    { requires: ['Committer'] },
  );

  t.testFor(
    'Brancher',
    'a clone keeps its own text when its source appends and is truncated afterwards',
    async (ctx) => {
      const store = ctx.store as C & Brancher;
      const folder = ctx.folder();
      const found = searchIn(store, folder);
      const source = await createSession(ctx, {
        folder,
        messages: [msg('user', 'the caracal'), msg('assistant', 'the ocelot')],
      });
      const copy = await store.clone(source.id);
      // Plain commits straight after the clone: what the source gains or drops is its own.
      await store.commit(source.id, { append: [msg('user', 'the margay')] });
      expect(await found('margay')).toEqual([source.id]);
      await store.commit(source.id, { truncate: 1 });
      expect(await found('ocelot')).toEqual([copy.id]);
      expect(await found('caracal')).toEqual([source.id, copy.id].sort());
      expect(await found('margay')).toEqual([]);
    },
    { requires: ['Committer'] },
  );

  t.test('truncate and operationId together: a repeated pop drops one message', async (ctx) => {
    const store = ctx.store as C;
    const s = await createSession(ctx, { messages: turns(2) });
    const pop = { operationId: 'pop-1', truncate: 3 };
    const first = await store.commit(s.id, pop);
    const again = await store.commit(s.id, pop);
    expect(again.revision).toBe(first.revision);
    expect(again.messageCount).toBe(3);
    const loaded = await store.load(s.id);
    expect(loaded.messages).toEqual(turns(2).slice(0, 3));
    expect(loaded.revision).toBe(first.revision);
  });
});
