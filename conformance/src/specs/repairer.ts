import {
  type Committer,
  isSessionKitError,
  type Repairer,
  type RepairReport,
  type Session,
  type Store,
} from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, listAll, turn, turns } from './util.js';

type R = Store & Repairer;

function expectReportShape(report: RepairReport): void {
  expect(Number.isInteger(report.rebuilt) && report.rebuilt >= 0).toBe(true);
  expect(Number.isInteger(report.indexEntriesFixed) && report.indexEntriesFixed >= 0).toBe(true);
  expect(Array.isArray(report.skippedCorrupt)).toBe(true);
}

/** Index repair: a healthy store is left as it is; damaged index entries are rebuilt. */
export const repairerSpec = defineSpec('repairer', 'Repairer', (t) => {
  t.test(
    'repair of a healthy store changes nothing observable and reports no damage',
    async (ctx) => {
      const store = ctx.store as R;
      const folder = ctx.folder();
      const parent = await createSession(ctx, { folder, messages: turns(3), title: 'p' });
      await createSession(ctx, {
        folder,
        parentId: parent.id,
        branchedAtTurn: 2,
        archivedAt: new Date(),
      });
      const listedBefore = await listAll(store, folder, { includeArchived: true });
      const loadedBefore = await store.load(parent.id);
      const report = await store.repair();
      expectReportShape(report);
      expect(report.skippedCorrupt).toEqual([]);
      expect(report.indexEntriesFixed).toBe(0);
      expect(await listAll(store, folder, { includeArchived: true })).toEqual(listedBefore);
      expect(await store.load(parent.id)).toEqual(loadedBefore);
      const again = await store.repair();
      expect(again.indexEntriesFixed).toBe(0);
    },
  );

  t.test(
    'repair rebuilds every kind of damaged index entry from the authoritative data',
    async (ctx) => {
      const damage = ctx.init.faults?.damageIndex;
      if (!damage) return ctx.skip('needs faults.damageIndex');
      const store = ctx.store as R;
      const kinds = ctx.init.faults?.indexDamageKinds ?? 1;
      for (let kind = 0; kind < kinds; kind++) {
        const folder = ctx.folder();
        const parent = await createSession(ctx, { folder, title: 'alpha', messages: turns(2) });
        const b = await createSession(ctx, {
          folder,
          title: 'beta',
          messages: turns(1),
          parentId: parent.id,
          branchedAtTurn: 1,
        });
        const grandchild = await createSession(ctx, { folder, parentId: b.id, branchedAtTurn: 0 });
        const sibling = await createSession(ctx, { folder, title: 'gamma' });
        if (typeof (store as Partial<Committer>).commit === 'function') {
          await (store as R & Committer).commit(b.id, {
            append: turn(5),
            patch: { title: 'beta two' },
          });
        }
        const expected = await listAll(store, folder, { includeArchived: true });
        const loaded = await Promise.all(
          [parent, b, grandchild, sibling].map((s) => store.load(s.id)),
        );
        await damage(store, b.id, kind);
        const report = await store.repair();
        expectReportShape(report);
        const where = `index damage of kind ${kind}`;
        expect(report.indexEntriesFixed, where).toBeGreaterThanOrEqual(1);
        expect(report.skippedCorrupt, where).toEqual([]);
        expect(await listAll(store, folder, { includeArchived: true }), where).toEqual(expected);
        const after = await Promise.all(
          [parent, b, grandchild, sibling].map((s) => store.load(s.id)),
        );
        expect(after, where).toEqual(loaded);
        const title = expected.find((s) => s.id === b.id)?.title ?? '';
        expect(
          (await store.list({ folder, query: title })).map((s) => s.id),
          where,
        ).toEqual([b.id]);
        expect((await store.repair()).indexEntriesFixed, where).toBe(0);
        // Nothing but stored sessions is listed, in any folder: every summary loads.
        const everywhere = await store.list({ includeArchived: true, limit: 1000 });
        for (const summary of everywhere) {
          expect((await store.load(summary.id)).id, where).toBe(summary.id);
        }
      }
    },
  );

  t.test('repair reports every unreadable session and lists the rest as loaded', async (ctx) => {
    // DESIGN: repair() → report of sessions rebuilt, skipped as corrupt, and index entries
    // fixed. Each call of the fault hook may damage a session in its own way.
    const corrupt = ctx.init.faults?.corruptSession;
    if (!corrupt) return ctx.skip('needs faults.corruptSession');
    const store = ctx.store as R;
    const folder = ctx.folder();
    const parent = await createSession(ctx, { folder, messages: turns(1) });
    const kids = [];
    for (let i = 0; i < 3; i++) {
      kids.push(await createSession(ctx, { folder, parentId: parent.id, branchedAtTurn: 0 }));
    }
    // One unreadable session per kind of damage, and at least three.
    const kinds = ctx.init.faults?.corruptionKinds ?? 1;
    const bad = [];
    for (let i = 0; i < Math.max(kinds, 3); i++) {
      bad.push(await createSession(ctx, { folder, messages: turns(1) }));
    }
    for (const [i, s] of bad.entries()) await corrupt(store, s.id, i % kinds);
    const report = await store.repair();
    expectReportShape(report);
    expect(report.skippedCorrupt.map((c) => c.id).sort()).toEqual(bad.map((s) => s.id).sort());
    for (const c of report.skippedCorrupt) expect(c.reason, c.id).toMatch(/\S/);
    for (const s of bad) await expectCode(store.load(s.id), 'corrupt');
    const listed = await listAll(store, folder, { includeArchived: true });
    // The readable sessions stay listed; whether an unreadable one is listed from its
    // index entry is the adapter's choice (DESIGN only asks that repair report it).
    const listedIds = listed.map((s) => s.id);
    for (const id of [parent.id, ...kids.map((k) => k.id)]) expect(listedIds).toContain(id);
    expect((await store.load(parent.id)).children).toEqual(kids.map((k) => k.id).sort());
    expect(listed.find((s) => s.id === parent.id)?.children).toEqual(kids.map((k) => k.id).sort());
    const again = await store.repair();
    expect(again.indexEntriesFixed).toBe(0);
    // A corrupt session can still be deleted, and deleting it leaves the others intact.
    for (const s of bad) await store.delete(s.id);
    expect((await store.repair()).skippedCorrupt).toEqual([]);
    expect((await store.load(parent.id)).children).toEqual(kids.map((k) => k.id).sort());
  });

  t.test('repair reports an unreadable session and keeps the others', async (ctx) => {
    const corrupt = ctx.init.faults?.corruptSession;
    if (!corrupt) return ctx.skip('needs faults.corruptSession');
    const store = ctx.store as R;
    const folder = ctx.folder();
    const good = await createSession(ctx, { folder, messages: turns(1) });
    const bad = await createSession(ctx, { folder, messages: turns(1) });
    await corrupt(store, bad.id, 0);
    const report = await store.repair();
    expectReportShape(report);
    expect(report.skippedCorrupt.map((c) => c.id)).toContain(bad.id);
    expect(
      report.skippedCorrupt.every((c) => typeof c.reason === 'string' && c.reason.length > 0),
    ).toBe(true);
    expect((await store.load(good.id)).messages).toEqual(turns(1));
    await expectCode(store.load(bad.id), 'corrupt');
    expect((await listAll(store, folder)).map((s) => s.id)).toContain(good.id);
  });

  t.test('deleting a parent promotes its readable children past unreadable ones', async (ctx) => {
    // DESIGN: delete promotes children; a corrupt session can still be deleted. A corrupt
    // child must neither block its parent's delete nor stop its siblings' promotion.
    const corrupt = ctx.init.faults?.corruptSession;
    if (!corrupt) return ctx.skip('needs faults.corruptSession');
    const store = ctx.store as R;
    const kinds = ctx.init.faults?.corruptionKinds ?? 1;
    for (let kind = 0; kind < kinds; kind++) {
      const folder = ctx.folder();
      const root = await createSession(ctx, { folder, messages: turns(2) });
      const parent = await createSession(ctx, {
        folder,
        messages: turns(2),
        parentId: root.id,
        branchedAtTurn: 2,
      });
      const kids = [];
      for (let i = 0; i < 3; i++) {
        kids.push(
          await createSession(ctx, {
            folder,
            messages: turns(1),
            parentId: parent.id,
            branchedAtTurn: 1,
          }),
        );
      }
      const [readableA, unreadable, readableB] = kids as [Session, Session, Session];
      await corrupt(store, unreadable.id, kind);
      const where = `corruption of kind ${kind}`;
      await store.delete(parent.id);
      await expectCode(store.load(parent.id), 'not_found');
      for (const kid of [readableA, readableB]) {
        const promoted = await store.load(kid.id);
        expect(promoted.parentId, where).toBe(root.id);
        expect(promoted.branchedAtTurn, where).toBe(1);
      }
      const rootChildren = (await store.load(root.id)).children;
      for (const kid of [readableA, readableB]) expect(rootChildren, where).toContain(kid.id);
      // Still unreadable, or readable again if the promotion rewrote what was damaged:
      // DESIGN leaves that to the adapter. Either way it can be deleted.
      await store.load(unreadable.id).catch((e: unknown) => {
        if (!isSessionKitError(e, 'corrupt')) throw e;
      });
      await store.delete(unreadable.id);
      await expectCode(store.load(unreadable.id), 'not_found');
      const report = await store.repair();
      expect(report.skippedCorrupt, where).toEqual([]);
      expect((await store.load(root.id)).children, where).toEqual(
        [readableA.id, readableB.id].sort(),
      );
    }
  });
});
