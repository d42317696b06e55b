import { enforceMax, type FullStore, type Pruner, type Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, listAll, turns } from './util.js';

type P = Store & Pruner;

/** Native retention: keep the newest N roots, never select sub-sessions. */
export const prunerSpec = defineSpec('pruner', 'Pruner', (t) => {
  const at = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * 60_000);

  t.test('enforceMax keeps the newest max roots and deletes the rest', async (ctx) => {
    const store = ctx.store as P;
    const folder = ctx.folder();
    const roots = [];
    for (let i = 0; i < 10; i++)
      roots.push(await createSession(ctx, { folder, updatedAt: at(i), messages: turns(1) }));
    expect(await store.enforceMax(4)).toBe(6);
    const left = (await listAll(store, folder, { includeArchived: true })).map((s) => s.id);
    expect(left).toEqual(
      roots
        .slice(6)
        .map((s) => s.id)
        .reverse(),
    );
    for (const gone of roots.slice(0, 6)) await expectCode(store.load(gone.id), 'not_found');
    expect(await store.enforceMax(4)).toBe(0);
  });

  t.test(
    'enforceMax never selects sub-sessions and promotes the children of pruned roots',
    async (ctx) => {
      const store = ctx.store as P;
      const folder = ctx.folder();
      const oldRoot = await createSession(ctx, { folder, updatedAt: at(1) });
      const oldChild = await createSession(ctx, {
        folder,
        updatedAt: at(0),
        parentId: oldRoot.id,
        branchedAtTurn: 0,
      });
      const newRoot = await createSession(ctx, { folder, updatedAt: at(5) });
      const newChild = await createSession(ctx, {
        folder,
        updatedAt: at(2),
        parentId: newRoot.id,
        branchedAtTurn: 0,
      });
      const deleted = await store.enforceMax(1);
      expect(deleted).toBe(1);
      await expectCode(store.load(oldRoot.id), 'not_found');
      const promoted = await store.load(oldChild.id);
      expect(promoted.parentId ?? undefined).toBeUndefined();
      expect((await store.load(newChild.id)).parentId).toBe(newRoot.id);
      expect((await store.load(newRoot.id)).children).toEqual([newChild.id]);
    },
  );

  t.test('enforceMax ranks roots by updatedAt, not createdAt', async (ctx) => {
    // DESIGN: keeps the newest max roots by updatedAt. createdAt runs the other way here.
    const store = ctx.store as P;
    const folder = ctx.folder();
    const roots = [];
    for (let i = 0; i < 6; i++) {
      roots.push(
        await createSession(ctx, { folder, createdAt: at(100 - i), updatedAt: at(200 + i) }),
      );
    }
    expect(await store.enforceMax(2)).toBe(4);
    const left = (await listAll(store, folder, { includeArchived: true })).map((s) => s.id);
    expect(left).toEqual([roots[5]!.id, roots[4]!.id]);
  });

  t.test('sub-sessions never take places among the newest max roots', async (ctx) => {
    // DESIGN: sub-sessions neither count nor are selected, however new they are.
    const store = ctx.store as P;
    const folder = ctx.folder();
    const r1 = await createSession(ctx, { folder, updatedAt: at(1) });
    const r2 = await createSession(ctx, { folder, updatedAt: at(2) });
    const r3 = await createSession(ctx, { folder, updatedAt: at(3) });
    const newest = await createSession(ctx, {
      folder,
      updatedAt: at(10),
      parentId: r2.id,
      branchedAtTurn: 0,
    });
    const newer = await createSession(ctx, {
      folder,
      updatedAt: at(9),
      parentId: newest.id,
      branchedAtTurn: 0,
    });
    expect(await store.enforceMax(2)).toBe(1);
    await expectCode(store.load(r1.id), 'not_found');
    for (const kept of [r2, r3, newest, newer])
      expect((await store.load(kept.id)).id).toBe(kept.id);
    expect((await store.load(newest.id)).parentId).toBe(r2.id);
    expect((await store.load(newer.id)).parentId).toBe(newest.id);
  });

  t.test('enforceMax breaks updatedAt ties by id, as list orders them', async (ctx) => {
    // DESIGN: ties by id, as list orders them (id desc in byte order: "a…" after "B…").
    const store = ctx.store as P;
    const folder = ctx.folder();
    const prefix = ctx.id('tie');
    const updatedAt = at(5);
    for (const x of ['a', 'B', 'A', 'b', 'a-b', 'a_b', '0', 'Z9']) {
      await store.create({ id: `${prefix}-${x}`, folder, updatedAt, createdAt: at(0) });
    }
    const ordered = (await listAll(store, folder, { includeArchived: true })).map((s) => s.id);
    expect(await store.enforceMax(3)).toBe(5);
    const left = (await listAll(store, folder, { includeArchived: true })).map((s) => s.id);
    expect(left).toEqual(ordered.slice(0, 3));
    const bytewise = ordered
      .slice()
      .sort((a, b) => Buffer.compare(Buffer.from(b), Buffer.from(a)))
      .slice(0, 3);
    expect(left).toEqual(bytewise);
  });

  t.test('enforceMax with max <= 0 or max >= the number of roots deletes nothing', async (ctx) => {
    const store = ctx.store as P;
    const folder = ctx.folder();
    for (let i = 0; i < 5; i++) await createSession(ctx, { folder, updatedAt: at(i) });
    expect(await store.enforceMax(0)).toBe(0);
    expect(await store.enforceMax(-3)).toBe(0);
    expect(await store.enforceMax(5)).toBe(0);
    expect(await store.enforceMax(50)).toBe(0);
    expect(await listAll(store, folder)).toHaveLength(5);
  });

  t.test('enforceMax counts roots across folders and archived roots', async (ctx) => {
    const store = ctx.store as P;
    const f1 = ctx.folder();
    const f2 = ctx.folder();
    const a = await createSession(ctx, { folder: f1, updatedAt: at(1) });
    const b = await createSession(ctx, { folder: f2, updatedAt: at(2), archivedAt: at(2) });
    const c = await createSession(ctx, { folder: f1, updatedAt: at(3) });
    expect(await store.enforceMax(2)).toBe(1);
    await expectCode(store.load(a.id), 'not_found');
    expect((await store.load(b.id)).id).toBe(b.id);
    expect((await store.load(c.id)).id).toBe(c.id);
  });

  t.testFor(
    'Store',
    "core's generic enforceMax works through this store's base contract",
    async (ctx) => {
      // Hide every capability: core must then prune with two keyset scans and a spool.
      const s = ctx.store;
      const base: Store = {
        create: (x) => s.create(x),
        load: (id) => s.load(id),
        save: (x) => s.save(x),
        delete: (id) => s.delete(id),
        list: (o) => s.list(o),
        close: () => s.close(),
      };
      const folder = ctx.folder();
      const roots = [];
      for (let i = 0; i < 9; i++)
        roots.push(await createSession(ctx, { folder, updatedAt: at(i) }));
      // Two roots share a timestamp, so the spool's keyset cursor must break ties by id.
      roots.push(await createSession(ctx, { folder, updatedAt: at(3) }));
      const child = await createSession(ctx, {
        folder,
        updatedAt: at(0),
        parentId: roots[8]!.id,
        branchedAtTurn: 0,
      });
      expect(await enforceMax(base, 3, { pageSize: 2 })).toBe(7);
      const left = (await listAll(s, folder, { includeArchived: true })).map((x) => x.id);
      expect(left.sort()).toEqual([roots[6]!.id, roots[7]!.id, roots[8]!.id, child.id].sort());
    },
  );

  t.test(
    'enforceMax deletes as delete does: bindings, pins, status and events go too',
    async (ctx) => {
      const store = ctx.store as P & Partial<FullStore>;
      if (typeof store.bind !== 'function') return ctx.skip('needs SessionRouter');
      const made = [
        await createSession(ctx, { updatedAt: at(0), messages: turns(1) }),
        await createSession(ctx, { updatedAt: at(1) }),
      ];
      for (const s of made) {
        await store.bind('telegram', `c-${s.id}`, '', s.id);
        await store.follow!('telegram', `pin-${s.id}`, s.id);
        if (typeof store.saveRuntimeStatus === 'function')
          await store.saveRuntimeStatus(s.id, { a: 1 });
        if (typeof store.append === 'function') await store.append(s.id, 'kind', { a: 1 });
      }
      expect(await store.enforceMax(1)).toBe(1);
      const left = (await store.list({ includeArchived: true })).map((x) => x.id);
      expect(left).toHaveLength(1);
      const kept = left[0]!;
      const gone = made.map((s) => s.id).find((id) => id !== kept)!;
      expect(await store.resolve!('telegram', `c-${gone}`, '', '')).toBe('');
      expect(await store.resolve!('telegram', `pin-${gone}`, '', '')).toBe('');
      expect(await store.resolve!('telegram', `c-${kept}`, '', '')).toBe(kept);
      expect(await store.resolve!('telegram', `pin-${kept}`, '', '')).toBe(kept);
      expect((await store.recent!(10)).map((r) => r.sessionId)).toEqual([kept]);
      // The id made again starts with nothing of the pruned session.
      await store.create({ id: gone });
      if (typeof store.loadRuntimeStatus === 'function')
        expect(await store.loadRuntimeStatus(gone)).toBeNull();
      if (typeof store.events === 'function') expect(await store.events(gone)).toEqual([]);
    },
  );

  t.test('enforceMax reads no message bodies', async (ctx) => {
    const probe = ctx.init.probes?.messageBodyReads;
    if (!probe) return ctx.skip('needs probes.messageBodyReads');
    const store = ctx.store as P;
    for (let i = 0; i < 6; i++) await createSession(ctx, { updatedAt: at(i), messages: turns(10) });
    const before = await probe(store);
    expect(await store.enforceMax(2)).toBe(4);
    expect(await probe(store)).toBe(before);
  });
});
