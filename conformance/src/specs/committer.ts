import type { Committer, FullStore, Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import {
  createSession,
  expectCode,
  expectListedAsLoaded,
  msg,
  sleep,
  turn,
  turns,
} from './util.js';

const committer = (s: Store) => s as Store & Committer;

/** Turn writes: append/replace plus patch in one atomic step. */
export const committerSpec = defineSpec('committer', 'Committer', (t) => {
  t.test('append adds messages in order and bumps revision and updatedAt', async (ctx) => {
    const s = await createSession(ctx, { messages: turns(1) });
    await sleep(2);
    const r = await committer(ctx.store).commit(s.id, { append: turn(1) });
    expect(r.revision).toBe(2);
    expect(r.messageCount).toBe(4);
    expect(r.updatedAt).toBeInstanceOf(Date);
    expect(r.updatedAt.getTime()).toBeGreaterThan(s.updatedAt.getTime());
    const loaded = await ctx.store.load(s.id);
    expect(loaded.messages).toEqual([...turn(0), ...turn(1)]);
    expect(loaded.revision).toBe(2);
    expect(loaded.updatedAt.getTime()).toBe(r.updatedAt.getTime());
  });

  t.test('back-to-back commits each move updatedAt strictly forward', async (ctx) => {
    const s = await createSession(ctx);
    let last = s.updatedAt.getTime();
    // No pause: several commits land in one millisecond, and each still moves it on.
    for (let i = 0; i < 20; i++) {
      const r = await committer(ctx.store).commit(s.id, { patch: { title: `t${i}` } });
      expect(r.updatedAt.getTime()).toBeGreaterThan(last);
      last = r.updatedAt.getTime();
    }
    expect((await expectListedAsLoaded(ctx.store, s.id)).updatedAt.getTime()).toBe(last);
  });

  t.test('replace swaps the whole history', async (ctx) => {
    const s = await createSession(ctx, { messages: turns(5) });
    const r = await committer(ctx.store).commit(s.id, {
      replace: [msg('assistant', 'summary of before')],
    });
    expect(r.messageCount).toBe(1);
    expect((await ctx.store.load(s.id)).messages).toEqual([msg('assistant', 'summary of before')]);
    const empty = await committer(ctx.store).commit(s.id, { replace: [] });
    expect(empty.messageCount).toBe(0);
    expect((await ctx.store.load(s.id)).messages).toEqual([]);
  });

  t.test('patch changes the named fields only', async (ctx) => {
    const s = await createSession(ctx, {
      title: 'old',
      metadata: { keep: '1', drop: '2', change: '3' },
      state: { a: 1 },
      mode: 'plan',
      model: 'm1',
    });
    await committer(ctx.store).commit(s.id, {
      patch: {
        title: 'new',
        status: 'waiting',
        provider: 'p2',
        tokenCount: 99,
        costUsd: 1.25,
        turnCount: 4,
        metadata: { drop: null, change: 'changed', added: 'yes' },
        state: { b: [1, 2] },
        archivedAt: new Date('2025-05-05T05:05:05.505Z'),
      },
    });
    const loaded = await ctx.store.load(s.id);
    expect(loaded).toMatchObject({
      title: 'new',
      status: 'waiting',
      provider: 'p2',
      model: 'm1',
      mode: 'plan',
      tokenCount: 99,
      costUsd: 1.25,
      turnCount: 4,
      metadata: { keep: '1', change: 'changed', added: 'yes' },
      state: { b: [1, 2] },
      revision: 2,
    });
    expect(loaded.metadata).not.toHaveProperty('drop');
    expect(loaded.archivedAt?.getTime()).toBe(Date.parse('2025-05-05T05:05:05.505Z'));
    await committer(ctx.store).commit(s.id, {
      patch: { archivedAt: null, state: null, mode: null },
    });
    const cleared = await ctx.store.load(s.id);
    expect(cleared.archivedAt ?? undefined).toBeUndefined();
    expect(cleared.state ?? undefined).toBeUndefined();
    expect(cleared.mode ?? undefined).toBeUndefined();
    expect(cleared.revision).toBe(3);
  });

  t.test('increment adds to the counters', async (ctx) => {
    const s = await createSession(ctx, { tokenCount: 10, costUsd: 0.5, turnCount: 1 });
    await committer(ctx.store).commit(s.id, {
      append: turn(0),
      increment: { tokenCount: 5, costUsd: 0.25, turnCount: 1 },
    });
    await committer(ctx.store).commit(s.id, { increment: { tokenCount: 7 } });
    const loaded = await ctx.store.load(s.id);
    expect(loaded.tokenCount).toBe(22);
    expect(loaded.costUsd).toBeCloseTo(0.75, 10);
    expect(loaded.turnCount).toBe(2);
  });

  t.test(
    'an expectedRevision that does not hold fails with conflict and writes nothing',
    async (ctx) => {
      const s = await createSession(ctx, { messages: turns(1) });
      const r = await committer(ctx.store).commit(s.id, { expectedRevision: 1, append: turn(1) });
      expect(r.revision).toBe(2);
      await expectCode(
        committer(ctx.store).commit(s.id, {
          expectedRevision: 1,
          append: turn(2),
          patch: { title: 'x' },
        }),
        'conflict',
      );
      await expectCode(
        committer(ctx.store).commit(s.id, { expectedRevision: 3, append: turn(2) }),
        'conflict',
      );
      const loaded = await ctx.store.load(s.id);
      expect(loaded.revision).toBe(2);
      expect(loaded.title).toBe('');
      expect(loaded.messages).toEqual(turns(2));
    },
  );

  t.test('an expectedMessageCount that does not hold fails with conflict', async (ctx) => {
    const s = await createSession(ctx, { messages: turns(2) });
    await expectCode(
      committer(ctx.store).commit(s.id, { expectedMessageCount: 3, append: turn(9) }),
      'conflict',
    );
    const ok = await committer(ctx.store).commit(s.id, {
      expectedMessageCount: 4,
      append: turn(2),
    });
    expect(ok.messageCount).toBe(6);
    expect((await ctx.store.load(s.id)).messages).toEqual(turns(3));
  });

  t.test('expectedMessageCount 0 holds only for an empty history', async (ctx) => {
    // DESIGN: an expectation that does not hold (including expectedMessageCount: 0) →
    // conflict and nothing written. 0 is an expectation, not an absent one.
    const s = await createSession(ctx, { messages: turns(1) });
    await expectCode(
      committer(ctx.store).commit(s.id, {
        expectedMessageCount: 0,
        append: turn(5),
        patch: { title: 'x' },
        increment: { tokenCount: 1 },
      }),
      'conflict',
    );
    expect(await ctx.store.load(s.id)).toEqual(s);
    const empty = await createSession(ctx);
    const r = await committer(ctx.store).commit(empty.id, {
      expectedMessageCount: 0,
      append: turn(0),
    });
    expect(r.messageCount).toBe(2);
    await expectCode(
      committer(ctx.store).commit(empty.id, { expectedMessageCount: 0, append: turn(1) }),
      'conflict',
    );
    expect((await ctx.store.load(empty.id)).messages).toEqual(turn(0));
  });

  t.test('a commit whose expectation fails changes no counter and no field', async (ctx) => {
    // DESIGN: with an expectation that does not hold → conflict and nothing at all is
    // written, counters included.
    const s = await createSession(ctx, {
      messages: turns(1),
      tokenCount: 10,
      costUsd: 0.5,
      turnCount: 1,
      metadata: { k: 'v' },
      state: { n: 1 },
    });
    const change = {
      append: turn(1),
      patch: { title: 'x', metadata: { k: null, j: 'w' }, state: { n: 2 }, mode: 'm' },
      increment: { tokenCount: 5, costUsd: 0.25, turnCount: 1 },
    };
    await expectCode(
      committer(ctx.store).commit(s.id, { ...change, expectedRevision: 2 }),
      'conflict',
    );
    await expectCode(
      committer(ctx.store).commit(s.id, { ...change, expectedMessageCount: 3 }),
      'conflict',
    );
    await expectCode(
      committer(ctx.store).commit(s.id, {
        ...change,
        expectedRevision: 1,
        expectedMessageCount: 1,
      }),
      'conflict',
    );
    expect(await ctx.store.load(s.id)).toEqual(s);
    const ok = await committer(ctx.store).commit(s.id, {
      ...change,
      expectedRevision: 1,
      expectedMessageCount: 2,
    });
    expect(ok.revision).toBe(2);
    expect(await ctx.store.load(s.id)).toMatchObject({
      tokenCount: 15,
      costUsd: 0.75,
      turnCount: 2,
      title: 'x',
      metadata: { j: 'w' },
      state: { n: 2 },
      mode: 'm',
    });
  });

  t.test('list follows a commit that moves the folder, archives and unarchives', async (ctx) => {
    // DESIGN: a summary always equals the loaded session without its messages, after
    // every kind of write; folder matches exactly and archived sessions are hidden.
    const from = ctx.folder();
    const to = ctx.folder();
    const s = await createSession(ctx, {
      folder: from,
      messages: turns(1),
      createdAt: new Date(Date.UTC(2024, 0, 1)),
      updatedAt: new Date(Date.UTC(2024, 0, 2)),
    });
    await createSession(ctx, { folder: from, title: 'stays' });
    const c = committer(ctx.store);
    await c.commit(s.id, { patch: { folder: to } });
    expect((await ctx.store.list({ folder: from })).map((x) => x.id)).not.toContain(s.id);
    let [listed] = await ctx.store.list({ folder: to });
    expect(listed?.id).toBe(s.id);
    await expectListedAsLoaded(ctx.store, s.id);
    const archivedAt = new Date(Date.UTC(2024, 6, 1));
    await c.commit(s.id, { append: turn(1), patch: { archivedAt } });
    expect(await ctx.store.list({ folder: to })).toEqual([]);
    [listed] = await ctx.store.list({ folder: to, includeArchived: true });
    expect(listed?.archivedAt?.getTime()).toBe(archivedAt.getTime());
    expect(listed?.messageCount).toBe(4);
    await expectListedAsLoaded(ctx.store, s.id);
    await c.commit(s.id, { patch: { archivedAt: null, folder: from } });
    expect((await ctx.store.list({ folder: from })).map((x) => x.id)).toContain(s.id);
    expect(await ctx.store.list({ folder: to, includeArchived: true })).toEqual([]);
    await expectListedAsLoaded(ctx.store, s.id);
  });

  t.test('an append reads no stored message bodies', async (ctx) => {
    // What keeps a commit's cost flat as the history grows: it never reads what is stored.
    const probe = ctx.init.probes?.messageBodyReads;
    if (!probe) return ctx.skip('needs probes.messageBodyReads');
    const s = await createSession(ctx, { messages: turns(500) });
    const before = await probe(ctx.store);
    for (let i = 0; i < 5; i++) {
      await committer(ctx.store).commit(s.id, {
        append: turn(500 + i),
        patch: { status: `s${i}` },
      });
    }
    await committer(ctx.store).commit(s.id, { expectedMessageCount: 1010, append: turn(505) });
    expect(await probe(ctx.store)).toBe(before);
    expect((await ctx.store.load(s.id)).messages).toHaveLength(1012);
  });

  t.test('commit on a missing session fails with not_found and creates nothing', async (ctx) => {
    const id = ctx.id();
    await expectCode(committer(ctx.store).commit(id, { append: turn(0) }), 'not_found');
    await expectCode(ctx.store.load(id), 'not_found');
  });

  t.test('commit and save share one revision sequence', async (ctx) => {
    const s = await createSession(ctx);
    await committer(ctx.store).commit(s.id, { append: turn(0) });
    await expectCode(ctx.store.save({ ...s, title: 'stale' }), 'conflict');
    const fresh = await ctx.store.load(s.id);
    const saved = await ctx.store.save({ ...fresh, title: 'fresh' });
    expect(saved.revision).toBe(3);
    const r = await committer(ctx.store).commit(s.id, { expectedRevision: 3, append: turn(1) });
    expect(r.revision).toBe(4);
    const loaded = await ctx.store.load(s.id);
    expect(loaded.title).toBe('fresh');
    expect(loaded.messages).toEqual(turns(2));
  });

  t.test('committed text is searchable and replaced text is not', async (ctx) => {
    const folder = ctx.folder();
    const s = await createSession(ctx, { folder });
    await committer(ctx.store).commit(s.id, {
      append: [msg('user', 'Where is the ZEBRA crossing?')],
    });
    expect((await ctx.store.list({ folder, query: 'zebra' })).map((x) => x.id)).toEqual([s.id]);
    await committer(ctx.store).commit(s.id, { replace: [msg('user', 'about giraffes')] });
    expect(await ctx.store.list({ folder, query: 'zebra' })).toEqual([]);
    expect((await ctx.store.list({ folder, query: 'GIRAFFE' })).map((x) => x.id)).toEqual([s.id]);
    await committer(ctx.store).commit(s.id, { patch: { title: 'Okapi notes' } });
    expect((await ctx.store.list({ folder, query: 'okapi' })).map((x) => x.id)).toEqual([s.id]);
  });

  t.test('commit results agree with load and list', async (ctx) => {
    const folder = ctx.folder();
    const s = await createSession(ctx, { folder });
    let r = await committer(ctx.store).commit(s.id, { append: turns(3) });
    r = await committer(ctx.store).commit(s.id, { append: turn(3), patch: { status: 'idle' } });
    const loaded = await ctx.store.load(s.id);
    const [summary] = await ctx.store.list({ folder });
    expect(loaded.revision).toBe(r.revision);
    expect(loaded.messages).toHaveLength(r.messageCount);
    expect(loaded.updatedAt.getTime()).toBe(r.updatedAt.getTime());
    expect(summary).toMatchObject({
      id: s.id,
      revision: r.revision,
      messageCount: 8,
      status: 'idle',
    });
    expect(summary?.updatedAt.getTime()).toBe(r.updatedAt.getTime());
  });

  t.test('commit keeps the caller arguments unchanged and unshared', async (ctx) => {
    const s = await createSession(ctx);
    const append = turns(2);
    const input = { append, patch: { metadata: { a: '1' } } };
    const snapshot = structuredClone(input);
    await committer(ctx.store).commit(s.id, input);
    expect(input).toEqual(snapshot);
    (append[0] as { content: string }).content = 'mutated after commit';
    expect((await ctx.store.load(s.id)).messages).toEqual(turns(2));
  });

  t.testFor(
    'Committer',
    'commit leaves runtime status alone',
    async (ctx) => {
      const store = ctx.store as FullStore;
      const s = await createSession(ctx);
      await store.saveRuntimeStatus(s.id, { checks: 'green' });
      await store.commit(s.id, { append: turn(0), patch: { title: 't' } });
      expect(await store.loadRuntimeStatus(s.id)).toEqual({ checks: 'green' });
    },
    { requires: ['RuntimeStatusStore'] },
  );

  t.test('a commit result is caller-owned', async (ctx) => {
    const store = ctx.store as FullStore;
    const s = await createSession(ctx);
    const r = await store.commit(s.id, { append: turn(0) });
    const at = r.updatedAt.getTime();
    r.updatedAt.setTime(0);
    expect((await store.load(s.id)).updatedAt.getTime()).toBe(at);
    expect((await store.list({ folder: s.folder }))[0]?.updatedAt.getTime()).toBe(at);
  });

  t.test('a commit keeps no reference to its patch', async (ctx) => {
    // DESIGN: input copies — mutating an argument after the call resolves changes nothing.
    const store = ctx.store as FullStore;
    const s = await createSession(ctx);
    const state = { plan: ['a'] };
    const metadata = { k: 'v' };
    await store.commit(s.id, { patch: { state, metadata } });
    state.plan.push('b');
    metadata.k = 'changed';
    const loaded = await store.load(s.id);
    expect(loaded.state).toEqual({ plan: ['a'] });
    expect(loaded.metadata).toEqual({ k: 'v' });
  });
});
