import {
  type Brancher,
  commitTurn,
  type FullStore,
  isSessionKitError,
  type Message,
  type Store,
} from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, expectListedAsLoaded, msg, turn, turns } from './util.js';

type B = Store & Brancher;
const brancher = (s: Store) => s as B;

const m = (text: string): Message => msg('user', text);

/** Merge rules (DESIGN, Brancher): a merge never loses data. */
export const mergeSpec = defineSpec('merge', 'Brancher', (t) => {
  t.test('merge after a promotion never skips the new parent history', async (ctx) => {
    const folder = ctx.folder();
    const a = await createSession(ctx, { folder, messages: [m('m0'), m('m1')] });
    const b = await brancher(ctx.store).branch(a.id, 2);
    await commitTurn(ctx.store, b.id, { append: [m('b1'), m('b2'), m('b3')] });
    await commitTurn(ctx.store, a.id, { append: [m('x1'), m('x2')] });
    const c = await brancher(ctx.store).branch(b.id, 5);
    await ctx.store.delete(b.id);
    const promoted = await expectListedAsLoaded(ctx.store, c.id);
    expect(promoted.parentId).toBe(a.id);
    expect(promoted.branchedAtTurn).toBe(2);
    const before = await ctx.store.load(a.id);
    await expectCode(brancher(ctx.store).merge(c.id), 'merge_diverged');
    expect(await ctx.store.load(a.id)).toEqual(before);
    expect(before.messages).toEqual(['m0', 'm1', 'x1', 'x2'].map(m));
  });

  t.test('merge after a promotion succeeds when the new parent did not move', async (ctx) => {
    const a = await createSession(ctx, { messages: [m('m0'), m('m1')], tokenCount: 10 });
    const b = await brancher(ctx.store).branch(a.id, 2);
    await commitTurn(ctx.store, b.id, { append: [m('b1')], increment: { tokenCount: 5 } });
    const c = await brancher(ctx.store).branch(b.id, 3);
    await commitTurn(ctx.store, c.id, { append: [m('c1')], increment: { tokenCount: 1 } });
    await ctx.store.delete(b.id);
    const merged = await brancher(ctx.store).merge(c.id);
    expect(merged.messages).toEqual(['m0', 'm1', 'b1', 'c1'].map(m));
    // What the lineage b → c gained since b branched from a.
    expect(merged.tokenCount).toBe(16);
    await expectListedAsLoaded(ctx.store, a.id);
  });

  t.test(
    'a branch promoted past a parent that rewrote its history never lets a sibling overwrite it',
    async (ctx) => {
      // R ─┬─ S (appends)          P replaced its copy of R's history, C branched from P.
      //    └─ P (replace) ── C     Deleting P promotes C onto R at the same turn.
      // If C's merge into R is accepted it replaces R's history (same count), and DESIGN then
      // makes S's merge diverge: a merge never loses data.
      const b = brancher(ctx.store);
      const root = await createSession(ctx, { messages: turns(1) });
      const sibling = await b.branch(root.id, 2);
      await commitTurn(ctx.store, sibling.id, { append: turns(1, 's') });
      const p = await b.branch(root.id, 2);
      await commitTurn(ctx.store, p.id, { replace: turns(1, 'p') });
      const c = await b.branch(p.id, 2);
      await ctx.store.delete(p.id);
      expect((await ctx.store.load(c.id)).parentId).toBe(root.id);
      const merged = await b.merge(c.id).then(
        () => true,
        (e: unknown) => {
          if (isSessionKitError(e, 'merge_diverged')) return false;
          throw e;
        },
      );
      if (merged) {
        expect((await ctx.store.load(root.id)).messages).toEqual(turns(1, 'p'));
        await expectCode(b.merge(sibling.id), 'merge_diverged');
        expect((await ctx.store.load(root.id)).messages).toEqual(turns(1, 'p'));
      }
    },
  );

  t.test('promotion re-bases branchedAtTurn onto the new parent', async (ctx) => {
    const a = await createSession(ctx, { messages: turns(2) });
    const b = await brancher(ctx.store).branch(a.id, 2);
    await commitTurn(ctx.store, b.id, { append: turns(2, 'b') });
    const late = await brancher(ctx.store).branch(b.id, 5);
    const early = await brancher(ctx.store).branch(b.id, 1);
    await ctx.store.delete(b.id);
    expect((await ctx.store.load(late.id)).branchedAtTurn).toBe(2);
    expect((await ctx.store.load(early.id)).branchedAtTurn).toBe(1);
    expect((await ctx.store.load(a.id)).children).toEqual([late.id, early.id].sort());
  });

  t.test(
    'merge into a parent whose history was saved with other messages diverges',
    async (ctx) => {
      const parent = await createSession(ctx, { messages: [m('p0'), m('p1')] });
      const child = await brancher(ctx.store).branch(parent.id, 2);
      await commitTurn(ctx.store, child.id, { append: [m('c')] });
      const loaded = await ctx.store.load(parent.id);
      await ctx.store.save({ ...loaded, messages: [m('q0'), m('q1')] });
      const before = await ctx.store.load(parent.id);
      await expectCode(brancher(ctx.store).merge(child.id), 'merge_diverged');
      expect(await ctx.store.load(parent.id)).toEqual(before);
    },
  );

  t.test(
    'merge into a parent that replaced its history with as many messages diverges',
    async (ctx) => {
      const store = ctx.store as B & { commit: (id: string, i: object) => Promise<unknown> };
      const parent = await createSession(ctx, { messages: [m('p0'), m('p1')], tokenCount: 3 });
      const child = await brancher(ctx.store).branch(parent.id, 2);
      await commitTurn(ctx.store, child.id, { append: [m('c')], increment: { tokenCount: 4 } });
      await store.commit(parent.id, { replace: [m('p0'), m('p1')] });
      const before = await ctx.store.load(parent.id);
      await expectCode(brancher(ctx.store).merge(child.id), 'merge_diverged');
      expect(await ctx.store.load(parent.id)).toEqual(before);
      await expectListedAsLoaded(ctx.store, parent.id);
    },
    { requires: ['Committer'] },
  );

  t.test('a save that keeps the parent history does not block a merge', async (ctx) => {
    const parent = await createSession(ctx, { messages: turns(1), title: 'old' });
    const child = await brancher(ctx.store).branch(parent.id, 2);
    await commitTurn(ctx.store, child.id, { append: turn(1) });
    const loaded = await ctx.store.load(parent.id);
    await ctx.store.save({ ...loaded, title: 'renamed' });
    const merged = await brancher(ctx.store).merge(child.id);
    expect(merged.messages).toEqual(turns(2));
    expect(merged.title).toBe('renamed');
  });

  t.test(
    'a save that cuts the parent back to the branch point makes the merge diverge',
    async (ctx) => {
      // DESIGN: a parent history changed after the branch point in any way → merge_diverged.
      // Appending then cutting back is such a change, though the count matches again.
      const parent = await createSession(ctx, { messages: turns(1) });
      const child = await brancher(ctx.store).branch(parent.id, 2);
      await commitTurn(ctx.store, child.id, { append: turn(1) });
      await commitTurn(ctx.store, parent.id, { append: turn(7) });
      const grown = await ctx.store.load(parent.id);
      await ctx.store.save({ ...grown, messages: grown.messages.slice(0, 2) });
      await expectCode(brancher(ctx.store).merge(child.id), 'merge_diverged');
      expect((await ctx.store.load(parent.id)).messages).toEqual(turns(1));
    },
  );

  t.test('merge keeps the counter changes the parent made after the branch', async (ctx) => {
    const parent = await createSession(ctx, {
      messages: turns(1),
      tokenCount: 100,
      costUsd: 1,
      turnCount: 1,
    });
    const child = await brancher(ctx.store).branch(parent.id, 2);
    await commitTurn(ctx.store, parent.id, {
      increment: { tokenCount: 7, costUsd: 0.5, turnCount: 1 },
    });
    await commitTurn(ctx.store, child.id, {
      append: turn(1),
      increment: { tokenCount: 50, costUsd: 2, turnCount: 1 },
    });
    const merged = await brancher(ctx.store).merge(child.id);
    expect(merged).toMatchObject({ tokenCount: 157, costUsd: 3.5, turnCount: 3 });
    expect(await expectListedAsLoaded(ctx.store, parent.id)).toEqual(merged);
  });

  t.test('merge of an untouched parent takes the branch counters exactly', async (ctx) => {
    // The branch's value itself, not base + (child − base), which floating point rounds:
    // 0.2 + (0.9 − 0.2) is 0.8999999999999999.
    const parent = await createSession(ctx, { messages: turns(1), costUsd: 0.2, tokenCount: 9 });
    const child = await brancher(ctx.store).branch(parent.id, 2);
    await commitTurn(ctx.store, child.id, {
      append: turn(1),
      patch: { costUsd: 0.9 },
      increment: { tokenCount: 1 },
    });
    const merged = await brancher(ctx.store).merge(child.id);
    expect(merged.costUsd).toBe(0.9);
    expect(merged.tokenCount).toBe(10);
    expect((await ctx.store.load(parent.id)).costUsd).toBe(0.9);
  });

  t.test('merge keeps the parent title, metadata, status, folder and state', async (ctx) => {
    const folder = ctx.folder();
    const parent = await createSession(ctx, {
      folder,
      messages: turns(1),
      title: 'parent title',
      metadata: { owner: 'p' },
      status: 'open',
      state: { plan: ['p'] },
      mode: 'plan',
    });
    const child = await brancher(ctx.store).branch(parent.id, 2);
    await commitTurn(ctx.store, child.id, {
      append: turn(1),
      patch: {
        title: 'child title',
        metadata: { owner: 'c' },
        status: 'done',
        state: { plan: ['c'] },
        mode: 'build',
      },
    });
    const merged = await brancher(ctx.store).merge(child.id);
    expect(merged).toMatchObject({
      title: 'parent title',
      folder,
      metadata: { owner: 'p' },
      status: 'open',
      state: { plan: ['p'] },
      mode: 'plan',
    });
    expect(merged.messages).toEqual(turns(2));
    expect(await expectListedAsLoaded(ctx.store, parent.id)).toEqual(merged);
    expect((await ctx.store.load(child.id)).title).toBe('child title');
  });

  t.test(
    'a merge from a branch that rewrote its history makes its siblings diverge',
    async (ctx) => {
      const store = ctx.store as B & { commit: (id: string, i: object) => Promise<unknown> };
      const parent = await createSession(ctx, { messages: [m('p0'), m('p1')] });
      const rewriter = await brancher(ctx.store).branch(parent.id, 2);
      const sibling = await brancher(ctx.store).branch(parent.id, 2);
      await store.commit(rewriter.id, { replace: [m('r0'), m('r1')] });
      await commitTurn(ctx.store, sibling.id, { append: [m('s')] });
      const merged = await brancher(ctx.store).merge(rewriter.id);
      expect(merged.messages).toEqual([m('r0'), m('r1')]);
      await expectCode(brancher(ctx.store).merge(sibling.id), 'merge_diverged');
      expect((await ctx.store.load(parent.id)).messages).toEqual([m('r0'), m('r1')]);
    },
    { requires: ['Committer'] },
  );

  t.test('a second merge of the same branch after more work diverges', async (ctx) => {
    const parent = await createSession(ctx, { messages: turns(1) });
    const child = await brancher(ctx.store).branch(parent.id, 2);
    await commitTurn(ctx.store, child.id, { append: turn(1) });
    await brancher(ctx.store).merge(child.id);
    await commitTurn(ctx.store, child.id, { append: turn(2) });
    await expectCode(brancher(ctx.store).merge(child.id), 'merge_diverged');
    expect((await ctx.store.load(parent.id)).messages).toEqual(turns(2));
  });

  t.test('merge of a branch whose parent is gone fails with not_found', async (ctx) => {
    const child = await createSession(ctx, { parentId: ctx.id(), branchedAtTurn: 0 });
    await expectCode(brancher(ctx.store).merge(child.id), 'not_found');
    expect((await ctx.store.load(child.id)).revision).toBe(1);
  });

  t.test(
    'an imported child (create with parentId) merges into an unchanged parent',
    async (ctx) => {
      const parent = await createSession(ctx, { messages: turns(1), tokenCount: 5 });
      const child = await createSession(ctx, {
        parentId: parent.id,
        branchedAtTurn: 2,
        messages: turns(2),
        tokenCount: 5,
      });
      await commitTurn(ctx.store, child.id, { increment: { tokenCount: 2 } });
      const merged = await brancher(ctx.store).merge(child.id);
      expect(merged.messages).toEqual(turns(2));
      expect(merged.tokenCount).toBe(7);
      const again = await createSession(ctx, { parentId: parent.id, branchedAtTurn: 4 });
      const loaded = await ctx.store.load(parent.id);
      await ctx.store.save({ ...loaded, messages: turns(2, 'other') });
      await expectCode(brancher(ctx.store).merge(again.id), 'merge_diverged');
    },
  );

  t.testFor(
    'Store',
    'a session whose parent does not exist deletes like any other',
    async (ctx) => {
      const orphan = await createSession(ctx, { parentId: ctx.id(), branchedAtTurn: 0 });
      const child = await createSession(ctx, { parentId: orphan.id, branchedAtTurn: 0 });
      await ctx.store.delete(orphan.id);
      await expectCode(ctx.store.load(orphan.id), 'not_found');
      const promoted = await expectListedAsLoaded(ctx.store, child.id);
      // Promoted to the missing grandparent, as delete promotes to any parent id.
      expect(promoted.parentId).toBe(orphan.parentId);
    },
  );

  t.test('branch carries the parent state and mode; clone carries them too', async (ctx) => {
    const parent = await createSession(ctx, {
      messages: turns(1),
      state: { plan: ['a', 'b'], goal: { n: 1 } },
      mode: 'plan',
    });
    const branch = await brancher(ctx.store).branch(parent.id, 1);
    expect(branch.state).toEqual({ plan: ['a', 'b'], goal: { n: 1 } });
    expect(branch.mode).toBe('plan');
    const copy = await brancher(ctx.store).clone(parent.id);
    expect(copy.state).toEqual({ plan: ['a', 'b'], goal: { n: 1 } });
    expect(copy.mode).toBe('plan');
    for (const id of [branch.id, copy.id]) {
      const loaded = await expectListedAsLoaded(ctx.store, id);
      expect(loaded.state).toEqual({ plan: ['a', 'b'], goal: { n: 1 } });
    }
  });

  t.test(
    'the parent merge returns is caller-owned',
    async (ctx) => {
      const store = ctx.store as FullStore;
      const parent = await createSession(ctx, { messages: turns(1), metadata: { k: 'v' } });
      const child = await store.branch(parent.id, 2);
      await store.commit(child.id, { append: turn(1) });
      const merged = await store.merge(child.id);
      merged.metadata.k = 'mutated';
      merged.messages.push(msg('user', 'ghost'));
      const loaded = await store.load(parent.id);
      expect(loaded.metadata).toEqual({ k: 'v' });
      expect(loaded.messages).toEqual(turns(2));
    },
    { requires: ['Committer'] },
  );
});
