import type { Committer, HistoryReader, Message, Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, inBackground, msg, tick, turn, turns } from './util.js';

type H = Store & HistoryReader & Committer;

/**
 * Checks that `history` equals some committed state of the torn-read writer below:
 * generation g's history is `g*2 + 4` messages all tagged `g`, possibly followed by
 * appended pairs `[g:q:i, g:a:i]` in order.
 */
function assertWholeHistory(history: Message[]): void {
  expect(history.length % 2).toBe(0);
  const first = history[0]?.content as string | undefined;
  if (first === undefined) return;
  const gen = first.split(':')[0]!;
  const base = Number(gen) * 2 + 4;
  expect(history.length).toBeGreaterThanOrEqual(base);
  for (let i = 0; i < history.length; i++) {
    const text = history[i]!.content as string;
    const [g, kind, n] = text.split(':');
    expect(
      g,
      `message ${i} of a ${history.length}-message snapshot comes from another commit`,
    ).toBe(gen);
    if (i < base) {
      expect(kind).toBe('base');
      expect(Number(n)).toBe(i);
    } else {
      const k = Math.floor((i - base) / 2);
      expect(kind).toBe((i - base) % 2 === 0 ? 'q' : 'a');
      expect(Number(n)).toBe(k);
    }
  }
}

function generation(g: number): Message[] {
  return Array.from({ length: g * 2 + 4 }, (_, i) =>
    msg(i % 2 ? 'assistant' : 'user', `${g}:base:${i}`),
  );
}

/** Snapshot reads of committed history. */
export const historyReaderSpec = defineSpec('history-reader', 'HistoryReader', (t) => {
  t.test('loadMessages returns the committed history', async (ctx) => {
    const store = ctx.store as Store & HistoryReader;
    const s = await createSession(ctx, { messages: turns(3) });
    expect(await store.loadMessages(s.id)).toEqual(turns(3));
    const loaded = await store.load(s.id);
    await store.save({ ...loaded, messages: turns(4) });
    expect(await store.loadMessages(s.id)).toEqual(turns(4));
  });

  t.test('loadMessages returns a caller-owned snapshot', async (ctx) => {
    const store = ctx.store as Store & HistoryReader;
    const s = await createSession(ctx, { messages: turns(2) });
    const snapshot = await store.loadMessages(s.id);
    snapshot.push(msg('user', 'extra'));
    (snapshot[0] as { content: string }).content = 'mutated';
    expect(await store.loadMessages(s.id)).toEqual(turns(2));
    expect((await store.load(s.id)).messages).toEqual(turns(2));
  });

  t.test('loadMessages of a missing session fails with not_found', async (ctx) => {
    const store = ctx.store as Store & HistoryReader;
    await expectCode(store.loadMessages(ctx.id()), 'not_found');
  });

  t.test(
    'loadMessages is never torn by concurrent commits',
    async (ctx) => {
      const store = ctx.store as H;
      const reader = (await ctx.peer()) as H;
      const s = await createSession(ctx, { messages: generation(0) });
      const writer = inBackground(async () => {
        for (let g = 1; g <= 12; g++) {
          await store.commit(s.id, { replace: generation(g) });
          for (let k = 0; k < 3; k++) {
            await store.commit(s.id, {
              append: [msg('user', `${g}:q:${k}`), msg('assistant', `${g}:a:${k}`)],
            });
          }
        }
      });
      let reads = 0;
      while (!writer.done) {
        const [viaReader, viaStore] = await Promise.all([
          reader.loadMessages(s.id),
          store.loadMessages(s.id),
        ]);
        assertWholeHistory(viaReader);
        assertWholeHistory(viaStore);
        reads++;
        await tick();
      }
      await writer.finished;
      expect(reads).toBeGreaterThan(0);
      const final = await store.loadMessages(s.id);
      assertWholeHistory(final);
      expect(final).toHaveLength(12 * 2 + 4 + 6);
    },
    { requires: ['Committer'], timeoutFactor: 2 },
  );

  t.test(
    'load is never torn by concurrent commits',
    async (ctx) => {
      const store = ctx.store as H;
      const reader = await ctx.peer();
      const s = await createSession(ctx, { messages: generation(0) });
      const writer = inBackground(async () => {
        for (let g = 1; g <= 10; g++) {
          await store.commit(s.id, { replace: generation(g), patch: { title: `gen ${g}` } });
          await store.commit(s.id, {
            append: [msg('user', `${g}:q:0`), msg('assistant', `${g}:a:0`)],
          });
        }
      });
      while (!writer.done) {
        const loaded = await reader.load(s.id);
        assertWholeHistory(loaded.messages as Message[]);
        const gen = Number((loaded.messages[0]!.content as string).split(':')[0]);
        // The title is written by the same commit as the generation's history.
        expect(loaded.title).toBe(gen === 0 ? '' : `gen ${gen}`);
        await tick();
      }
      await writer.finished;
    },
    { requires: ['Committer'], timeoutFactor: 2 },
  );

  t.test(
    'loadMessages sees appends in commit order',
    async (ctx) => {
      const store = ctx.store as H;
      const s = await createSession(ctx);
      for (let i = 0; i < 10; i++) {
        await store.commit(s.id, { append: turn(i) });
        expect(await store.loadMessages(s.id)).toEqual(turns(i + 1));
      }
    },
    { requires: ['Committer'] },
  );
});
