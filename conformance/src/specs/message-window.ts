import type {
  Committer,
  HistoryReader,
  Message,
  MessageWindow,
  MessageWindowQuery,
  Store,
} from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec, type TestContext } from '../harness.js';
import { createSession, expectCode, inBackground, msg, tick, turns } from './util.js';

type H = Store & HistoryReader & Committer;

/** `n` messages whose text is their position: "p0", "p1" … */
const numbered = (n: number, tag = 'p'): Message[] =>
  Array.from({ length: n }, (_, i) => msg(i % 2 ? 'assistant' : 'user', `${tag}${i}`));

/** The store's `loadMessageWindow`, or a skip when it does not have the optional method. */
function windowReader(
  ctx: TestContext,
): (id: string, w?: MessageWindowQuery) => Promise<MessageWindow> {
  const store = ctx.store as H;
  if (typeof store.loadMessageWindow !== 'function') {
    ctx.skip('the store has no loadMessageWindow (optional); core falls back on load');
  }
  return (id, w) => store.loadMessageWindow!(id, w) as Promise<MessageWindow>;
}

/**
 * The generation writer of the torn-read test: generation g's history is `10 + g`
 * messages "g:i" (i = position), then appended pairs continue the positions.
 */
function generation(g: number): Message[] {
  return Array.from({ length: 10 + g }, (_, i) => msg('user', `${g}:${i}`));
}

/**
 * Asserts `end` is the length of a committed history of generation `gen`: `10 + gen`
 * after its replace, then 2 more after each of its 3 appends.
 */
function assertCommittedLength(gen: number, end: number): void {
  const extra = end - (10 + gen);
  expect(
    extra >= 0 && extra <= 6 && extra % 2 === 0,
    `a window ending at ${end} is no committed state of generation ${gen}`,
  ).toBe(true);
}

/** Asserts `messages` are positions `offset…` of ONE generation's committed history. */
function assertSlice(messages: Message[], offset: number): void {
  const gen = (messages[0]?.content as string | undefined)?.split(':')[0];
  messages.forEach((m, j) => {
    const [g, pos] = (m.content as string).split(':');
    expect(g, `message ${j} of a window comes from another commit`).toBe(gen);
    expect(Number(pos), `message ${j} of a window is out of place`).toBe(offset + j);
  });
}

/** Windowed history reads (DESIGN, HistoryReader). */
export const messageWindowSpec = defineSpec('message-window', 'HistoryReader', (t) => {
  t.test('{last: n} returns the last n messages, all of them when there are fewer', async (ctx) => {
    const store = ctx.store as H;
    const s = await createSession(ctx, { messages: numbered(10) });
    expect(await store.loadMessages(s.id, { last: 3 })).toEqual(numbered(10).slice(7));
    expect(await store.loadMessages(s.id, { last: 10 })).toEqual(numbered(10));
    expect(await store.loadMessages(s.id, { last: 25 })).toEqual(numbered(10));
    expect(await store.loadMessages(s.id, { last: 0 })).toEqual([]);
    expect(await store.loadMessages(s.id, { last: 1 })).toEqual(numbered(10).slice(9));
  });

  t.test('{offset, limit} returns that range; past the end is empty', async (ctx) => {
    const store = ctx.store as H;
    const s = await createSession(ctx, { messages: numbered(10) });
    const all = numbered(10);
    expect(await store.loadMessages(s.id, { offset: 0, limit: 4 })).toEqual(all.slice(0, 4));
    expect(await store.loadMessages(s.id, { offset: 3, limit: 4 })).toEqual(all.slice(3, 7));
    expect(await store.loadMessages(s.id, { offset: 8, limit: 4 })).toEqual(all.slice(8));
    expect(await store.loadMessages(s.id, { offset: 10, limit: 4 })).toEqual([]);
    expect(await store.loadMessages(s.id, { offset: 1000, limit: 4 })).toEqual([]);
    expect(await store.loadMessages(s.id, { offset: 5 })).toEqual(all.slice(5));
    expect(await store.loadMessages(s.id, { limit: 2 })).toEqual(all.slice(0, 2));
    expect(await store.loadMessages(s.id, { offset: 2, limit: 0 })).toEqual([]);
    expect(await store.loadMessages(s.id, {})).toEqual(all);
  });

  t.test('windows of an empty history are empty', async (ctx) => {
    const store = ctx.store as H;
    const s = await createSession(ctx);
    expect(await store.loadMessages(s.id, { last: 5 })).toEqual([]);
    expect(await store.loadMessages(s.id, { offset: 0, limit: 5 })).toEqual([]);
  });

  t.test(
    'windows follow appends and replaces',
    async (ctx) => {
      const store = ctx.store as H;
      const s = await createSession(ctx, { messages: numbered(4) });
      await store.commit(s.id, { append: numbered(3, 'a') });
      expect(await store.loadMessages(s.id, { last: 4 })).toEqual([
        numbered(4)[3]!,
        ...numbered(3, 'a'),
      ]);
      await store.commit(s.id, { replace: numbered(2, 'r') });
      expect(await store.loadMessages(s.id, { last: 4 })).toEqual(numbered(2, 'r'));
      expect(await store.loadMessages(s.id, { offset: 1, limit: 5 })).toEqual([
        numbered(2, 'r')[1]!,
      ]);
      expect(await store.loadMessages(s.id, { offset: 2 })).toEqual([]);
      const loaded = await store.load(s.id);
      await store.save({ ...loaded, messages: numbered(6, 's') });
      expect(await store.loadMessages(s.id, { offset: 4, limit: 9 })).toEqual(
        numbered(6, 's').slice(4),
      );
    },
    { requires: ['Committer'] },
  );

  t.test('a bad window is invalid_argument naming what is wrong', async (ctx) => {
    const store = ctx.store as H;
    const s = await createSession(ctx, { messages: turns(2) });
    const cases: [unknown, RegExp][] = [
      [{ last: -1 }, /\blast\b/],
      [{ offset: 1.5 }, /\boffset\b/],
      [{ limit: 'ten' }, /\blimit\b/],
      [{ last: 1, offset: 0 }, /\blast\b.*\boffset\b/],
      [{ lats: 1 }, /"lats"/],
    ];
    for (const [window, names] of cases) {
      const e = await expectCode(store.loadMessages(s.id, window as never), 'invalid_argument');
      expect(e.message, JSON.stringify(window)).toMatch(names);
    }
  });

  t.test('loadMessageWindow reports offset, messageCount and revision', async (ctx) => {
    const read = windowReader(ctx);
    const s = await createSession(ctx, { messages: numbered(10) });
    expect(await read(s.id, { last: 3 })).toEqual({
      messages: numbered(10).slice(7),
      offset: 7,
      messageCount: 10,
      revision: 1,
    });
    expect(await read(s.id, { offset: 12, limit: 3 })).toEqual({
      messages: [],
      offset: 10,
      messageCount: 10,
      revision: 1,
    });
    expect(await read(s.id)).toEqual({
      messages: numbered(10),
      offset: 0,
      messageCount: 10,
      revision: 1,
    });
    // Paging backwards from the newest window visits every message once.
    let page = await read(s.id, { last: 4 });
    const seen = [...page.messages];
    while (page.offset > 0) {
      const limit = Math.min(4, page.offset);
      page = await read(s.id, { offset: page.offset - limit, limit });
      seen.unshift(...page.messages);
    }
    expect(seen).toEqual(numbered(10));
  });

  t.test('a window is caller-owned', async (ctx) => {
    const store = ctx.store as H;
    const s = await createSession(ctx, { messages: numbered(5) });
    const w = await store.loadMessages(s.id, { last: 2 });
    (w[0] as { content: string }).content = 'mutated';
    w.push(msg('user', 'extra'));
    expect(await store.loadMessages(s.id, { last: 2 })).toEqual(numbered(5).slice(3));
  });

  t.test(
    'bad windows fail with invalid_argument, a missing session with not_found',
    async (ctx) => {
      const store = ctx.store as H;
      const s = await createSession(ctx, { messages: numbered(3) });
      const bad: unknown[] = [
        { last: -1 },
        { last: 1.5 },
        { offset: -2 },
        { limit: -1 },
        { limit: Number.POSITIVE_INFINITY },
        { last: 2, offset: 0 },
        { last: 2, limit: 1 },
        { first: 2 },
        { last: '2' },
        null,
        7,
      ];
      for (const w of bad) {
        await expectCode(store.loadMessages(s.id, w as MessageWindowQuery), 'invalid_argument');
      }
      await expectCode(store.loadMessages(ctx.id(), { last: 2 }), 'not_found');
      await expectCode(store.loadMessages('../x', { last: 2 }), 'invalid_argument');
      const reader = ctx.store as H;
      if (typeof reader.loadMessageWindow === 'function') {
        await expectCode(reader.loadMessageWindow(s.id, { last: -1 }), 'invalid_argument');
        await expectCode(reader.loadMessageWindow(ctx.id(), { last: 1 }), 'not_found');
      }
    },
  );

  t.test(
    'windows are never torn by concurrent commits',
    async (ctx) => {
      const store = ctx.store as H;
      const reader = (await ctx.peer()) as H;
      const s = await createSession(ctx, { messages: generation(0) });
      const writer = inBackground(async () => {
        for (let g = 1; g <= 10; g++) {
          await store.commit(s.id, { replace: generation(g) });
          for (let k = 0; k < 3; k++) {
            const at = 10 + g + k * 2;
            await store.commit(s.id, {
              append: [msg('user', `${g}:${at}`), msg('user', `${g}:${at + 1}`)],
            });
          }
        }
      });
      let reads = 0;
      while (!writer.done) {
        const tail = await reader.loadMessages(s.id, { last: 5 });
        expect(tail).toHaveLength(5);
        const [tailGen, tailStart] = (tail[0]!.content as string).split(':').map(Number);
        assertSlice(tail, tailStart!);
        // The last n of a committed history end where that history ends.
        assertCommittedLength(tailGen!, tailStart! + 5);
        const range = await store.loadMessages(s.id, { offset: 3, limit: 6 });
        expect(range).toHaveLength(6);
        assertSlice(range, 3);
        if (typeof reader.loadMessageWindow === 'function') {
          const w = await reader.loadMessageWindow(s.id, { last: 4 });
          expect(w.offset).toBe(w.messageCount - 4);
          assertSlice(w.messages as Message[], w.offset);
          const gen = Number((w.messages[0]!.content as string).split(':')[0]);
          assertCommittedLength(gen, w.messageCount);
        }
        reads++;
        await tick();
      }
      await writer.finished;
      expect(reads).toBeGreaterThan(0);
    },
    { requires: ['Committer'], timeoutFactor: 2 },
  );
});
