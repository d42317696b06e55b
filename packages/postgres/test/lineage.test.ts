// Merge lineage (schema version 4): merge never loses data, promotions are core's
// promotedChild, a session whose parent does not exist can be deleted.
import { isSessionKitError, type Message } from '@sessionkit/core';
import { type HistoryLineage, promotedChild, type SessionHeader } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { lineageOf } from '../src/lineage.js';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the PostgreSQL lineage tests did not run');

const m = (content: string): Message => ({ role: 'user', content });

async function withStore(fn: (store: PostgresStore) => Promise<void>): Promise<void> {
  const store = await freshStore();
  try {
    await fn(store);
  } finally {
    await destroyStore(store);
  }
}

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isSessionKitError(e, code as never), String(e)).toBe(true);
}

/** The stored header fields promotedChild reads and writes, plus the lineage. */
async function side(store: PostgresStore, id: string) {
  const r = await admin().query(
    `SELECT id, parent_id, branched_at_turn, history_rewrites, merge_base
     FROM "${store.schema}".sessions WHERE id = $1`,
    [id],
  );
  const row = r.rows[0];
  const header = { id } as SessionHeader;
  if (row.parent_id !== null) header.parentId = row.parent_id;
  if (row.branched_at_turn !== null) header.branchedAtTurn = row.branched_at_turn;
  return { header, lineage: lineageOf(row) as HistoryLineage };
}

describe.runIf(available)('postgres › merge lineage', () => {
  it('a child promoted past a parent that moved on cannot merge (merge_diverged, nothing written)', () =>
    withStore(async (store) => {
      await store.create({ id: 'A', messages: [m('m0'), m('m1')] });
      const B = await store.branch('A', 2);
      await store.commit(B.id, { append: [m('b1'), m('b2'), m('b3')] });
      await store.commit('A', { append: [m('x1'), m('x2')] });
      const C = await store.branch(B.id, 5);
      await store.delete(B.id);
      const c = await store.load(C.id);
      expect(c.parentId).toBe('A');
      expect(c.branchedAtTurn).toBe(2);
      const before = await store.load('A');
      await expectCode(store.merge(C.id), 'merge_diverged');
      expect(await store.load('A')).toEqual(before);
    }));

  it('a parent that replaced its history with as many messages after the branch → merge_diverged', () =>
    withStore(async (store) => {
      await store.create({ id: 'A', messages: [m('m0'), m('m1')] });
      const B = await store.branch('A', 2);
      await store.commit(B.id, { append: [m('b1')] });
      await store.commit('A', { replace: [m('other0'), m('other1')] });
      const before = await store.load('A');
      await expectCode(store.merge(B.id), 'merge_diverged');
      expect(await store.load('A')).toEqual(before);
    }));

  it('a parent that saved a rewritten history diverges; a save that only extends it is kept', () =>
    withStore(async (store) => {
      await store.create({ id: 'A', messages: [m('m0')] });
      const B = await store.branch('A', 1);
      // Re-saving the same messages extends nothing and rewrites nothing: merge still works.
      const a = await store.load('A');
      await store.save({ ...a, title: 'renamed' });
      await store.commit(B.id, { append: [m('b1')] });
      const merged = await store.merge(B.id);
      expect(merged.messages).toEqual([m('m0'), m('b1')]);
      expect(merged.title).toBe('renamed');
      const C = await store.branch('A', 2);
      const a2 = await store.load('A');
      await store.save({ ...a2, messages: [m('m0'), m('changed')] });
      await store.commit('A', { replace: [m('m0'), m('b1')] });
      await expectCode(store.merge(C.id), 'merge_diverged');
    }));

  it("the parent's own counter changes are kept: 100 + 7 (parent) + 50 (branch) = 157", () =>
    withStore(async (store) => {
      await store.create({ id: 'A', tokenCount: 100, costUsd: 0.5, messages: [m('m0')] });
      const B = await store.branch('A', 1);
      await store.commit('A', { increment: { tokenCount: 7, costUsd: 0.25 } });
      await store.commit(B.id, { append: [m('b1')], increment: { tokenCount: 50 } });
      const merged = await store.merge(B.id);
      expect(merged.tokenCount).toBe(157);
      expect(merged.costUsd).toBe(0.75);
      expect(merged.messages).toEqual([m('m0'), m('b1')]);
      const { messages, ...header } = merged;
      const [summary] = await store.list({ parentId: undefined, query: undefined, limit: 1 });
      expect(summary).toEqual({ ...header, messageCount: messages.length });
    }));

  it('a branch that rewrote its own history counts as a rewrite of the parent once merged', () =>
    withStore(async (store) => {
      await store.create({ id: 'A', messages: [m('m0'), m('m1')] });
      const B = await store.branch('A', 2);
      const D = await store.branch('A', 2);
      await store.commit(B.id, { replace: [m('new')] });
      await store.merge(B.id);
      expect((await store.load('A')).messages).toEqual([m('new')]);
      // D was based on A's old history: A's prefix was replaced, so D diverged.
      await admin().query(
        `UPDATE "${store.schema}".sessions SET branched_at_turn = 1 WHERE id = $1`,
        [D.id],
      );
      await expectCode(store.merge(D.id), 'merge_diverged');
    }));

  it('create with a parentId (an import) records the base; clone is a root', () =>
    withStore(async (store) => {
      await store.create({ id: 'P', messages: [m('a')] });
      await store.commit('P', { replace: [m('b')] });
      await store.create({ id: 'K', parentId: 'P', branchedAtTurn: 1, messages: [m('b')] });
      expect((await side(store, 'K')).lineage).toEqual({
        rewrites: 0,
        base: {
          parentRewrites: 1,
          ownRewrites: 0,
          counters: { tokenCount: 0, costUsd: 0, turnCount: 0 },
        },
      });
      await store.commit('K', { append: [m('c')] });
      expect((await store.merge('K')).messages).toEqual([m('b'), m('c')]);
      const clone = await store.clone('K');
      expect((await side(store, clone.id)).lineage).toEqual({ rewrites: 0 });
      // An orphan import: base 0, the value a parent created later starts with.
      await store.create({ id: 'O', parentId: 'nobody', messages: [] });
      expect((await side(store, 'O')).lineage.base?.parentRewrites).toBe(0);
    }));
});

describe.runIf(available)('postgres › delete promotions are core promotedChild', () => {
  it('children of a deleted branch, of a deleted rewritten branch, of a root and of a cycle', () =>
    withStore(async (store) => {
      await store.create({ id: 'G', messages: [m('0'), m('1'), m('2')] });
      const P = await store.branch('G', 2);
      await store.commit(P.id, { append: [m('p')], increment: { turnCount: 1 } });
      const K1 = await store.branch(P.id, 3);
      const K2 = await store.branch(P.id, 1);
      await store.create({ id: 'K3', parentId: P.id, messages: [] }); // no branchedAtTurn
      const R = await store.branch(P.id, 3);
      await store.commit(R.id, { replace: [m('r')] }); // R rewrote its history
      const RK = await store.branch(R.id, 1);
      // A parent cycle (create allows it): X ↔ Y.
      await store.create({ id: 'X', parentId: 'Y', messages: [] });
      await store.create({ id: 'Y', parentId: 'X', messages: [] });
      const cases: [string, string[]][] = [
        [P.id, [K1.id, K2.id, 'K3', R.id]],
        [R.id, [RK.id]],
        ['X', ['Y']],
        // A root: its children (K1, K2, K3 by now) become roots without a base.
        ['G', [K1.id, K2.id, 'K3', RK.id]],
      ];
      for (const [deleted, children] of cases) {
        if (deleted === 'G') {
          expect((await side(store, K1.id)).header).toEqual({
            id: K1.id,
            parentId: 'G',
            branchedAtTurn: 2,
          });
          expect((await side(store, K2.id)).header.branchedAtTurn).toBe(1);
          expect((await side(store, 'K3')).header).toEqual({ id: 'K3', parentId: 'G' });
          // R had rewritten its history: RK's own rewrites at the base are unknown now.
          expect((await side(store, RK.id)).lineage.base?.ownRewrites).toBe(-1);
        }
        const d = await side(store, deleted);
        const expected = await Promise.all(
          children.map(async (id) => promotedChild(await side(store, id), d)),
        );
        await store.delete(deleted);
        for (let i = 0; i < children.length; i++) {
          expect(await side(store, children[i]!)).toEqual(expected[i]);
        }
      }
      expect((await side(store, K1.id)).header).toEqual({ id: K1.id, branchedAtTurn: 2 });
      expect((await side(store, 'Y')).header).toEqual({ id: 'Y' });
    }));

  it('enforceMax promotes the children of the roots it deletes exactly as promotedChild does', () =>
    withStore(async (store) => {
      await store.create({ id: 'old', messages: [m('a'), m('b')] });
      const kid = await store.branch('old', 1);
      await store.commit(kid.id, { replace: [m('z')] });
      const d = await side(store, 'old');
      const expected = promotedChild(await side(store, kid.id), d);
      await store.create({ id: 'new', messages: [] });
      expect(await store.enforceMax(1)).toBe(1);
      expect(await side(store, kid.id)).toEqual(expected);
      expect(expected.header).toEqual({ id: kid.id, branchedAtTurn: 1 });
      expect(expected.lineage).toEqual({ rewrites: 1 });
    }));

  it('a session whose parent does not exist is deleted like any other, promoting its children', () =>
    withStore(async (store) => {
      await store.create({ id: 'orphan', parentId: 'missing', branchedAtTurn: 0, messages: [] });
      await store.create({ id: 'kid', parentId: 'orphan', branchedAtTurn: 0, messages: [] });
      await store.delete('orphan');
      await expectCode(store.load('orphan'), 'not_found');
      expect((await store.load('kid')).parentId).toBe('missing');
      expect(store.stats.txRetries).toBe(0);
    }));
});
