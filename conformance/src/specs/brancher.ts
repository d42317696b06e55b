import { type Brancher, type Committer, commitTurn, type Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import {
  createSession,
  expectCode,
  expectListedAsLoaded,
  normalizedWords,
  race,
  tally,
  turn,
  turns,
} from './util.js';

type B = Store & Brancher;
const brancher = (s: Store) => s as B;

/** Appends turn `i` through core's `commitTurn` (native commit, or load/modify/save). */
async function appendTurn(store: Store, id: string, i: number, tag: string): Promise<void> {
  await commitTurn(store, id, { append: turn(i, tag) });
}

/** Branch, clone and merge. */
export const brancherSpec = defineSpec('brancher', 'Brancher', (t) => {
  t.test('branch copies the first atTurn messages and links parent and child', async (ctx) => {
    const parent = await createSession(ctx, {
      messages: turns(3),
      folder: ctx.folder(),
      model: 'm',
      title: 'root',
      tokenCount: 300,
      costUsd: 0.3,
      turnCount: 3,
    });
    const child = await brancher(ctx.store).branch(parent.id, 4);
    expect(child.id).not.toBe(parent.id);
    expect(child.parentId).toBe(parent.id);
    expect(child.branchedAtTurn).toBe(4);
    expect(child.messages).toEqual(turns(3).slice(0, 4));
    expect(child.revision).toBe(1);
    expect(child.folder).toBe(parent.folder);
    // Counters carry over, so a later merge fast-forwards the parent to complete totals.
    expect(child).toMatchObject({ tokenCount: 300, costUsd: 0.3, turnCount: 3 });
    const loadedChild = await ctx.store.load(child.id);
    expect(loadedChild).toEqual(child);
    const loadedParent = await ctx.store.load(parent.id);
    expect(loadedParent.children).toEqual([child.id]);
    expect(loadedParent.messages).toEqual(turns(3));
  });

  t.test('branch accepts 0 and messageCount and rejects points outside', async (ctx) => {
    const folder = ctx.folder();
    const parent = await createSession(ctx, { folder, messages: turns(2) });
    const atStart = await brancher(ctx.store).branch(parent.id, 0);
    expect(atStart.messages).toEqual([]);
    expect(atStart.branchedAtTurn).toBe(0);
    const atEnd = await brancher(ctx.store).branch(parent.id, 4);
    expect(atEnd.messages).toEqual(turns(2));
    for (const bad of [-1, 5, 1.5, Number.NaN]) {
      await expectCode(brancher(ctx.store).branch(parent.id, bad), 'invalid_argument');
    }
    expect((await ctx.store.list({ folder, limit: 100 })).length).toBe(3);
    expect((await ctx.store.load(parent.id)).children.sort()).toEqual(
      [atStart.id, atEnd.id].sort(),
    );
  });

  t.test('branch of a missing parent fails with not_found', async (ctx) => {
    await expectCode(brancher(ctx.store).branch(ctx.id(), 0), 'not_found');
  });

  t.test('a branch evolves independently of its parent', async (ctx) => {
    const parent = await createSession(ctx, { messages: turns(2) });
    const child = await brancher(ctx.store).branch(parent.id, 2);
    await appendTurn(ctx.store, child.id, 7, 'child');
    await appendTurn(ctx.store, parent.id, 8, 'parent');
    expect((await ctx.store.load(child.id)).messages).toEqual([...turn(0), ...turn(7, 'child')]);
    expect((await ctx.store.load(parent.id)).messages).toEqual([...turns(2), ...turn(8, 'parent')]);
  });

  t.test('clone copies the full history without a parent link', async (ctx) => {
    const source = await createSession(ctx, {
      messages: turns(3),
      title: 'source',
      metadata: { a: '1' },
      tokenCount: 5,
    });
    const copy = await brancher(ctx.store).clone(source.id);
    expect(copy.id).not.toBe(source.id);
    expect(copy.parentId ?? undefined).toBeUndefined();
    expect(copy.messages).toEqual(turns(3));
    expect(copy.metadata.clonedFrom).toBe(source.id);
    expect(copy.metadata.a).toBe('1');
    expect(copy.revision).toBe(1);
    expect((await ctx.store.load(source.id)).children).toEqual([]);
    await appendTurn(ctx.store, copy.id, 9, 'copy');
    expect((await ctx.store.load(source.id)).messages).toEqual(turns(3));
    await expectCode(brancher(ctx.store).clone(ctx.id()), 'not_found');
  });

  t.test('clone carries state and mode and is listed as loaded', async (ctx) => {
    // DESIGN: clone → independent duplicate with the full history, counters, state and
    // mode, no parent link, metadata.clonedFrom = id; its summary equals load().
    const folder = ctx.folder();
    const source = await createSession(ctx, {
      folder,
      messages: turns(2),
      state: { plan: [{ step: 1 }], goal: 'ship' },
      mode: 'plan',
      tokenCount: 7,
      costUsd: 0.25,
      turnCount: 2,
      status: 'waiting',
    });
    const copy = await brancher(ctx.store).clone(source.id);
    for (const x of [copy, await ctx.store.load(copy.id)]) {
      expect(x).toMatchObject({
        state: { plan: [{ step: 1 }], goal: 'ship' },
        mode: 'plan',
        tokenCount: 7,
        costUsd: 0.25,
        turnCount: 2,
        folder,
        messages: turns(2),
      });
    }
    const summary = (await ctx.store.list({ folder })).find((x) => x.id === copy.id);
    expect(summary).toMatchObject({ state: copy.state, mode: 'plan', messageCount: 4 });
    await expectListedAsLoaded(ctx.store, copy.id);
    await expectListedAsLoaded(ctx.store, source.id);
  });

  t.test('branch carries the parent state, mode and counters', async (ctx) => {
    // DESIGN: branch → the parent's first atTurn messages, the parent's counters, state
    // and mode, parentId set, branchedAtTurn = atTurn.
    const parent = await createSession(ctx, {
      messages: turns(2),
      mode: 'plan',
      state: { plan: ['a', 'b'], goal: null },
      tokenCount: 11,
      costUsd: 0.5,
      turnCount: 2,
    });
    const child = await brancher(ctx.store).branch(parent.id, 2);
    for (const x of [child, await ctx.store.load(child.id)]) {
      expect(x).toMatchObject({
        mode: 'plan',
        state: { plan: ['a', 'b'], goal: null },
        tokenCount: 11,
        costUsd: 0.5,
        turnCount: 2,
        parentId: parent.id,
        branchedAtTurn: 2,
      });
    }
    const plain = await createSession(ctx, { messages: turns(1) });
    const plainChild = await brancher(ctx.store).branch(plain.id, 0);
    expect(plainChild.mode ?? undefined).toBeUndefined();
    expect(plainChild.state ?? undefined).toBeUndefined();
    // DESIGN: undefined object properties are dropped.
    expect(Object.keys(plainChild)).not.toContain('mode');
    expect(Object.keys(plainChild)).not.toContain('state');
    expect(Object.keys(await ctx.store.load(plainChild.id))).not.toContain('state');
  });

  t.testFor(
    'Brancher',
    'a child created with a parentId merges like a branch made at that moment',
    async (ctx) => {
      // DESIGN: create keeps parentId (imports restore trees); a merge fast-forwards the
      // parent unless its history changed after the branch point, and the parent ends
      // with its own counters plus what the branch added.
      const store = ctx.store as Store & Brancher & Committer;
      const parent = await createSession(ctx, { messages: turns(3), tokenCount: 10 });
      // The parent rewrites its history before the child is imported: that is before
      // the child's branch point, so it does not block the merge.
      await store.commit(parent.id, { replace: turns(2) });
      const child = await createSession(ctx, {
        parentId: parent.id,
        branchedAtTurn: 4,
        messages: turns(2),
        tokenCount: 10,
      });
      await store.commit(child.id, { append: turn(2), increment: { tokenCount: 5 } });
      await store.commit(parent.id, { increment: { tokenCount: 1 } });
      const merged = await store.merge(child.id);
      expect(merged.messages).toEqual(turns(3));
      expect(merged.tokenCount).toBe(16);
      // A rewrite of the parent after the import does block the next merge.
      const second = await createSession(ctx, {
        parentId: parent.id,
        branchedAtTurn: 6,
        messages: turns(3),
      });
      await store.commit(parent.id, { replace: turns(3, 'other') });
      await expectCode(store.merge(second.id), 'merge_diverged');
    },
    { requires: ['Committer'] },
  );

  t.testFor(
    'Brancher',
    'merge errors name the adapter and the session',
    async (ctx) => {
      // DESIGN: messages name the adapter and the id.
      const store = ctx.store as Store & Brancher & Committer;
      const root = await createSession(ctx, { messages: turns(1) });
      const child = await store.branch(root.id, 2);
      await store.commit(root.id, { append: turn(1) });
      const messageOf = async (p: Promise<unknown>) =>
        p.then(
          () => '',
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        );
      const diverged = await messageOf(store.merge(child.id));
      expect(diverged).toMatch(/^\[sessionkit\/[a-z0-9-]+\] /);
      expect(diverged).toContain(child.id);
      const rewritten = await createSession(ctx, { messages: turns(1) });
      const second = await store.branch(rewritten.id, 2);
      await store.commit(rewritten.id, { replace: turns(1, 'x') });
      expect(await messageOf(store.merge(second.id))).toContain(second.id);
      expect(await messageOf(store.merge(root.id))).toContain(root.id);
    },
    { requires: ['Committer'] },
  );

  t.testFor(
    'Brancher',
    'a branch promoted past its deleted parent merges on its grandparent base',
    async (ctx) => {
      // DESIGN: delete promotes children to the grandparent, branch point re-based; a merge
      // diverges only if the new parent's history changed after that point, and the
      // parent keeps its own counter changes plus what the branch added.
      const store = ctx.store as Store & Brancher & Committer;
      const g = await createSession(ctx, { messages: turns(1), tokenCount: 10 });
      // g rewrites its history before anything branches from it.
      await store.commit(g.id, { replace: turns(2) });
      const p = await store.branch(g.id, 4);
      const c = await store.branch(p.id, 4);
      await store.commit(c.id, { append: turn(2), increment: { tokenCount: 5 } });
      await store.commit(g.id, { increment: { tokenCount: 1 } });
      await store.delete(p.id);
      const promoted = await store.load(c.id);
      expect(promoted.parentId).toBe(g.id);
      expect(promoted.branchedAtTurn).toBe(4);
      const merged = await store.merge(c.id);
      expect(merged.messages).toEqual(turns(3));
      expect(merged.tokenCount).toBe(16);
    },
    { requires: ['Committer'] },
  );

  t.testFor(
    'Brancher',
    'a merge that adds nothing does not block a sibling branch',
    async (ctx) => {
      // DESIGN: merge_diverged only when the parent's history changed after the branch
      // point; fast-forwarding to an identical history changes nothing.
      const store = ctx.store as Store & Brancher & Committer;
      const p = await createSession(ctx, { messages: turns(2) });
      const idle = await store.branch(p.id, 4);
      const busy = await store.branch(p.id, 4);
      await store.merge(idle.id);
      await store.commit(busy.id, { append: turn(2) });
      expect((await store.merge(busy.id)).messages).toEqual(turns(3));
    },
    { requires: ['Committer'] },
  );

  t.testFor(
    'Brancher',
    'a session promoted to a root keeps serving merges of its own branches',
    async (ctx) => {
      // DESIGN: delete promotes children (to roots when the deleted session was a root);
      // a merge diverges only if the parent's history changed after the branch point.
      const store = ctx.store as Store & Brancher & Committer;
      const r = await createSession(ctx, { messages: turns(1) });
      const c = await store.branch(r.id, 2);
      // c rewrites its own history before d branches from it: d's base is that state.
      await store.commit(c.id, { replace: turns(2) });
      const d = await store.branch(c.id, 4);
      await store.commit(d.id, { append: turn(2) });
      await store.delete(r.id);
      expect((await store.load(c.id)).parentId ?? undefined).toBeUndefined();
      expect((await store.merge(d.id)).messages).toEqual(turns(3));
    },
    { requires: ['Committer'] },
  );

  t.testFor(
    'Brancher',
    'a merge whose counters would leave their range is rejected and writes nothing',
    async (ctx) => {
      // DESIGN: tokenCount and turnCount are safe integers, costUsd finite; a result that
      // would leave that range is rejected, not stored. The parent keeps its own changes
      // plus what the branch added, so both sides' increments count.
      const store = ctx.store as Store & Brancher & Committer;
      const max = Number.MAX_SAFE_INTEGER;
      const p = await createSession(ctx, { messages: turns(1), tokenCount: max - 10 });
      const c = await store.branch(p.id, 2);
      await store.commit(c.id, { append: turn(1), increment: { tokenCount: 6 } });
      await store.commit(p.id, { increment: { tokenCount: 6 } });
      const before = await store.load(p.id);
      const tokenError = await expectCode(store.merge(c.id), 'invalid_argument');
      expect(normalizedWords(tokenError.message)).toContain('tokencount');
      expect(await store.load(p.id)).toEqual(before);
      const half = Number.MAX_VALUE / 2;
      const q = await createSession(ctx, { messages: turns(1), costUsd: half });
      const d = await store.branch(q.id, 2);
      await store.commit(d.id, { increment: { costUsd: half } });
      await store.commit(q.id, { patch: { costUsd: Number.MAX_VALUE } });
      const qBefore = await store.load(q.id);
      const costError = await expectCode(store.merge(d.id), 'invalid_argument');
      expect(normalizedWords(costError.message)).toContain('costusd');
      expect(await store.load(q.id)).toEqual(qBefore);
      const r = await createSession(ctx, { messages: turns(1), turnCount: max - 1 });
      const e = await store.branch(r.id, 2);
      await store.commit(e.id, { increment: { turnCount: 1 } });
      await store.commit(r.id, { increment: { turnCount: 1 } });
      const turnError = await expectCode(store.merge(e.id), 'invalid_argument');
      expect(normalizedWords(turnError.message)).toContain('turncount');
    },
    { requires: ['Committer'] },
  );

  t.test('clone of a branch has no parent link and no branch point', async (ctx) => {
    const parent = await createSession(ctx, { messages: turns(2) });
    const branch = await brancher(ctx.store).branch(parent.id, 2);
    const copy = await brancher(ctx.store).clone(branch.id);
    expect(copy.parentId ?? undefined).toBeUndefined();
    expect(copy.branchedAtTurn ?? undefined).toBeUndefined();
    expect(copy.messages).toEqual(turn(0));
    expect((await ctx.store.load(parent.id)).children).toEqual([branch.id]);
  });

  t.test('branch, clone and merge results are caller-owned', async (ctx) => {
    const parent = await createSession(ctx, { messages: turns(2), metadata: { k: 'v' } });
    const branch = await brancher(ctx.store).branch(parent.id, 4);
    const copy = await brancher(ctx.store).clone(parent.id);
    for (const s of [branch, copy]) {
      s.messages.push(turn(9)[0]!);
      s.metadata.k = 'mutated';
      s.children.push('ghost');
    }
    expect((await ctx.store.load(branch.id)).messages).toEqual(turns(2));
    expect((await ctx.store.load(copy.id)).metadata.k).toBe('v');
    await appendTurn(ctx.store, branch.id, 2, 't');
    const merged = await brancher(ctx.store).merge(branch.id);
    merged.messages.length = 0;
    merged.children.length = 0;
    const reloaded = await ctx.store.load(parent.id);
    expect(reloaded.messages).toEqual(turns(3));
    expect(reloaded.children).toEqual([branch.id]);
  });

  t.test('merge fast-forwards the parent to the child', async (ctx) => {
    const parent = await createSession(ctx, {
      messages: turns(2),
      tokenCount: 1,
      costUsd: 0.1,
      turnCount: 2,
    });
    const child = await brancher(ctx.store).branch(parent.id, 4);
    await appendTurn(ctx.store, child.id, 2, 't');
    const loadedChild = await ctx.store.load(child.id);
    await ctx.store.save({ ...loadedChild, tokenCount: 50, costUsd: 2.5, turnCount: 3 });
    const merged = await brancher(ctx.store).merge(child.id);
    expect(merged.id).toBe(parent.id);
    expect(merged.messages).toEqual(turns(3));
    expect(merged.tokenCount).toBe(50);
    expect(merged.costUsd).toBe(2.5);
    expect(merged.turnCount).toBe(3);
    expect(merged.revision).toBe(parent.revision + 1);
    expect(await ctx.store.load(parent.id)).toEqual(merged);
  });

  t.test(
    'merge into a parent that moved on fails with merge_diverged and writes nothing',
    async (ctx) => {
      const parent = await createSession(ctx, { messages: turns(2) });
      const early = await brancher(ctx.store).branch(parent.id, 2);
      await appendTurn(ctx.store, early.id, 5, 'early');
      await expectCode(brancher(ctx.store).merge(early.id), 'merge_diverged');
      const atTip = await brancher(ctx.store).branch(parent.id, 4);
      await appendTurn(ctx.store, atTip.id, 6, 'tip');
      await appendTurn(ctx.store, parent.id, 7, 'parent');
      const before = await ctx.store.load(parent.id);
      await expectCode(brancher(ctx.store).merge(atTip.id), 'merge_diverged');
      expect(await ctx.store.load(parent.id)).toEqual(before);
    },
  );

  t.test(
    'merge of a root fails with invalid_argument, of a missing session with not_found',
    async (ctx) => {
      const root = await createSession(ctx, { messages: turns(1) });
      await expectCode(brancher(ctx.store).merge(root.id), 'invalid_argument');
      await expectCode(brancher(ctx.store).merge(ctx.id()), 'not_found');
      expect((await ctx.store.load(root.id)).revision).toBe(1);
    },
  );

  t.test(
    'concurrent merges into one parent are serialised: one wins, one diverges',
    async (ctx) => {
      const peer = await ctx.peer();
      const parent = await createSession(ctx, { messages: turns(2) });
      const a = await brancher(ctx.store).branch(parent.id, 4);
      const b = await brancher(ctx.store).branch(parent.id, 4);
      await appendTurn(ctx.store, a.id, 10, 'a');
      await appendTurn(ctx.store, b.id, 20, 'b');
      const results = await race([
        () => brancher(ctx.store).merge(a.id),
        () => brancher(peer).merge(b.id),
      ]);
      expect(tally(results)).toEqual({ ok: 1, merge_diverged: 1 });
      const winner = results[0]!.status === 'fulfilled' ? 'a' : 'b';
      const expected = [...turns(2), ...turn(winner === 'a' ? 10 : 20, winner)];
      const final = await ctx.store.load(parent.id);
      expect(final.messages).toEqual(expected);
      expect(final.revision).toBe(parent.revision + 1);
    },
  );

  t.test('concurrent branches of one parent are all linked', async (ctx) => {
    const peer = await ctx.peer();
    const parent = await createSession(ctx, { messages: turns(4) });
    const results = await race(
      Array.from(
        { length: 8 },
        (_, i) => () => brancher(i % 2 ? peer : ctx.store).branch(parent.id, i),
      ),
    );
    expect(tally(results)).toEqual({ ok: 8 });
    const childIds = results.map((r) => (r as PromiseFulfilledResult<{ id: string }>).value.id);
    expect(new Set(childIds).size).toBe(8);
    expect((await ctx.store.load(parent.id)).children).toEqual([...childIds].sort());
  });

  t.test(
    'branching does not lose a concurrent change to the parent',
    async (ctx) => {
      const peer = await ctx.peer();
      const parent = await createSession(ctx, { messages: turns(1) });
      const jobs: (() => Promise<unknown>)[] = [];
      for (let i = 0; i < 6; i++) {
        jobs.push(() => brancher(ctx.store).branch(parent.id, 2));
        jobs.push(() => appendTurn(peer, parent.id, 100 + i, 'p'));
      }
      const results = await race(jobs);
      expect(tally(results)).toEqual({ ok: 12 });
      const final = await ctx.store.load(parent.id);
      expect(final.messages).toHaveLength(2 + 12);
      expect(final.children).toHaveLength(6);
    },
    { requires: ['Committer'] },
  );

  t.test('deleting a branch removes it from the parent children', async (ctx) => {
    const parent = await createSession(ctx, { messages: turns(1) });
    const a = await brancher(ctx.store).branch(parent.id, 1);
    const b = await brancher(ctx.store).branch(parent.id, 2);
    await ctx.store.delete(a.id);
    expect((await ctx.store.load(parent.id)).children).toEqual([b.id]);
    const grandchild = await brancher(ctx.store).branch(b.id, 1);
    await ctx.store.delete(b.id);
    expect((await ctx.store.load(parent.id)).children).toEqual([grandchild.id]);
    expect((await ctx.store.load(grandchild.id)).parentId).toBe(parent.id);
  });
});
