// Committer: operation ids. A commit names one logical write; a repeat writes nothing and
// resolves with the first one's result, checked before the expectations, seen by every
// store instance, for at least the session's last MAX_REMEMBERED_OPERATIONS ids.
import {
  type Brancher,
  type CommitResult,
  type Committer,
  MAX_OPERATION_ID_LENGTH,
  MAX_REMEMBERED_OPERATIONS,
  type Store,
} from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, msg, race, tally, turns } from './util.js';

type C = Store & Committer;

/** A commit's result as plain values, to compare two results. */
const plain = (r: CommitResult) => ({
  revision: r.revision,
  messageCount: r.messageCount,
  updatedAt: r.updatedAt.getTime(),
});

export const operationsSpec = defineSpec('operations', 'Committer', (t) => {
  t.test(
    'a repeated operationId writes nothing and resolves with the first result',
    async (ctx) => {
      const store = ctx.store as C;
      const s = await createSession(ctx, { messages: turns(1) });
      const input = {
        operationId: 'turn-1',
        append: [msg('user', 'once')],
        increment: { turnCount: 1, tokenCount: 10 },
        patch: { title: 'first' },
      };
      const first = await store.commit(s.id, input);
      const after = await store.load(s.id);
      const again = await store.commit(s.id, { ...input, patch: { title: 'second' } });
      expect(plain(again)).toEqual(plain(first));
      const loaded = await store.load(s.id);
      expect(loaded).toEqual(after);
      expect(loaded.messages).toEqual([...turns(1), msg('user', 'once')]);
      expect(loaded.turnCount).toBe(1);
      expect(loaded.tokenCount).toBe(10);
      expect(loaded.title).toBe('first');
    },
  );

  t.test('the repeat is checked before expectations that no longer hold', async (ctx) => {
    const store = ctx.store as C;
    const s = await createSession(ctx, { messages: turns(1) });
    const input = {
      operationId: 'op-a',
      expectedRevision: 1,
      expectedMessageCount: 2,
      append: [msg('user', 'a')],
    };
    const first = await store.commit(s.id, input);
    await store.commit(s.id, { append: [msg('user', 'later')] });
    const before = await store.load(s.id);
    // Revision 1 and 2 messages are long gone: the id still answers first.
    expect(plain(await store.commit(s.id, input))).toEqual(plain(first));
    expect(await store.load(s.id)).toEqual(before);
    // Without the id, the same stale expectations conflict.
    const { operationId: _id, ...unnamed } = input;
    await expectCode(store.commit(s.id, unnamed), 'conflict');
  });

  t.test('distinct operation ids apply, and ids are per session', async (ctx) => {
    const store = ctx.store as C;
    const a = await createSession(ctx);
    const b = await createSession(ctx);
    await store.commit(a.id, { operationId: 'x', append: [msg('user', 'a1')] });
    await store.commit(a.id, { operationId: 'y', append: [msg('user', 'a2')] });
    const rb = await store.commit(b.id, { operationId: 'x', append: [msg('user', 'b1')] });
    expect(rb.revision).toBe(2);
    expect((await store.load(a.id)).messages).toEqual([msg('user', 'a1'), msg('user', 'a2')]);
    expect((await store.load(b.id)).messages).toEqual([msg('user', 'b1')]);
  });

  t.test('a commit that failed records nothing: the same id applies once it can', async (ctx) => {
    const store = ctx.store as C;
    const s = await createSession(ctx, { messages: turns(1) });
    const input = { operationId: 'retry-me', expectedRevision: 2, append: [msg('user', 'x')] };
    await expectCode(store.commit(s.id, input), 'conflict');
    await expectCode(
      store.commit(s.id, { operationId: 'retry-me', truncate: 99 }),
      'invalid_argument',
    );
    await store.commit(s.id, { patch: { title: 'moved' } });
    const r = await store.commit(s.id, input);
    expect(r.revision).toBe(3);
    expect((await store.load(s.id)).messages).toEqual([...turns(1), msg('user', 'x')]);
  });

  t.test('another store instance and a reopened one see the recorded id', async (ctx) => {
    const store = ctx.store as C;
    const peer = (await ctx.peer()) as C;
    const s = await createSession(ctx);
    const input = { operationId: 'cross', append: [msg('user', 'one')] };
    const first = await store.commit(s.id, input);
    expect(plain(await peer.commit(s.id, input))).toEqual(plain(first));
    // A store that knew nothing of the write (opened after it) answers the same.
    if (ctx.hasPeer && ctx.init.createPeer) {
      const reopened = (await ctx.init.createPeer(ctx.store)) as C;
      try {
        expect(plain(await reopened.commit(s.id, input))).toEqual(plain(first));
      } finally {
        await reopened.close();
      }
    }
    expect((await store.load(s.id)).messages).toEqual([msg('user', 'one')]);
  });

  t.test('a retry after a lost reply or an unavailable error leaves one copy', async (ctx) => {
    const store = ctx.store as C;
    const peer = (await ctx.peer()) as C;
    const s = await createSession(ctx, { messages: turns(1) });
    const input = { operationId: 'lost-reply', append: turns(1, 'reply') };
    // The first call lands but its caller never learns it (a timeout, a dropped connection
    // after the write: what `unavailable` means); it retries, maybe on another instance.
    const landed = store.commit(s.id, input);
    const retried = await peer.commit(s.id, input);
    expect(plain(retried)).toEqual(plain(await landed));
    expect(plain(await store.commit(s.id, input))).toEqual(plain(retried));
    expect((await store.load(s.id)).messages).toEqual([...turns(1), ...turns(1, 'reply')]);
  });

  t.test('concurrent commits with one operation id apply once and agree', async (ctx) => {
    const store = ctx.store as C;
    const peer = (await ctx.peer()) as C;
    const s = await createSession(ctx);
    const input = {
      operationId: 'racing',
      append: [msg('user', 'only once')],
      increment: { turnCount: 1 },
    };
    const results = await race(
      Array.from({ length: 6 }, (_, i) => () => (i % 2 ? peer : store).commit(s.id, input)),
    );
    expect(tally(results)).toEqual({ ok: 6 });
    const values = results.map((r) => plain((r as PromiseFulfilledResult<CommitResult>).value));
    for (const v of values) expect(v).toEqual(values[0]);
    const loaded = await store.load(s.id);
    expect(loaded.messages).toEqual([msg('user', 'only once')]);
    expect(loaded.turnCount).toBe(1);
    expect(loaded.revision).toBe(2);
  });

  t.test(
    `the last ${MAX_REMEMBERED_OPERATIONS} operation ids of a session are remembered`,
    async (ctx) => {
      const store = ctx.store as C;
      const s = await createSession(ctx);
      const results: CommitResult[] = [];
      for (let i = 0; i < MAX_REMEMBERED_OPERATIONS; i++) {
        results.push(
          await store.commit(s.id, { operationId: `op-${i}`, increment: { turnCount: 1 } }),
        );
      }
      // The oldest of the last 1,000 and the newest still answer with their first result.
      for (const i of [0, 1, MAX_REMEMBERED_OPERATIONS - 1]) {
        const again = await store.commit(s.id, {
          operationId: `op-${i}`,
          increment: { turnCount: 1 },
        });
        expect(plain(again), `op-${i}`).toEqual(plain(results[i]!));
      }
      expect((await store.load(s.id)).turnCount).toBe(MAX_REMEMBERED_OPERATIONS);
    },
    { timeoutFactor: 4 },
  );

  t.test('a deleted and recreated session remembers none of its former ids', async (ctx) => {
    const store = ctx.store as C;
    const s = await createSession(ctx);
    await store.commit(s.id, { operationId: 'old-life', append: [msg('user', 'before')] });
    await store.delete(s.id);
    await store.create({ id: s.id });
    const r = await store.commit(s.id, { operationId: 'old-life', append: [msg('user', 'after')] });
    expect(r.revision).toBe(2);
    expect((await store.load(s.id)).messages).toEqual([msg('user', 'after')]);
  });

  t.test('a clone or a branch is a new session: it holds none of the source ids', async (ctx) => {
    const store = ctx.store as C & Partial<Brancher>;
    if (typeof store.clone !== 'function') return ctx.skip('needs Brancher');
    const s = await createSession(ctx);
    await store.commit(s.id, { operationId: 'op-1', append: [msg('user', 'x')] });
    for (const copy of [await store.clone(s.id), await store.branch!(s.id, 1)]) {
      const r = await store.commit(copy.id, { operationId: 'op-1', append: [msg('user', 'y')] });
      expect(r.revision).toBe(2);
      expect((await store.load(copy.id)).messages).toEqual([msg('user', 'x'), msg('user', 'y')]);
    }
  });

  t.test('operationId must be 1–256 chars of text', async (ctx) => {
    const store = ctx.store as C;
    const s = await createSession(ctx, { messages: turns(1) });
    for (const bad of [
      '',
      'x'.repeat(MAX_OPERATION_ID_LENGTH + 1),
      'a\u0000b',
      'a\uD800b',
      42,
      null,
    ]) {
      await expectCode(
        store.commit(s.id, { operationId: bad as never, append: [msg('user', 'no')] }),
        'invalid_argument',
      );
    }
    const longest = 'é'.repeat(MAX_OPERATION_ID_LENGTH);
    const r = await store.commit(s.id, { operationId: longest, append: [msg('user', 'yes')] });
    expect(plain(await store.commit(s.id, { operationId: longest }))).toEqual(plain(r));
    const loaded = await store.load(s.id);
    expect(loaded.messages).toEqual([...turns(1), msg('user', 'yes')]);
    expect(loaded.revision).toBe(2);
  });
});
