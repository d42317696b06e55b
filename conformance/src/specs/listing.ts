// Store: listing — order, ties, filters, archived, search basics, limits, keyset paging,
// caller-owned summaries, and that listing never reads message bodies.
import type { SessionSummary } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, listAll, msg, turns } from './util.js';

const ids = (xs: { id: string }[]) => xs.map((x) => x.id);

/** The `list` tests of the Store spec (run with the rest of `store`). */
export const storeListingSpec = defineSpec('store', 'Store', (t) => {
  t.test(
    'list orders by updatedAt desc then id desc, and oldestFirst reverses both',
    async (ctx) => {
      const folder = ctx.folder();
      const at = (ms: number) => new Date(Date.UTC(2024, 0, 1) + ms);
      const specs = [
        { id: 'order-b', updatedAt: at(2000) },
        { id: 'order-a', updatedAt: at(2000) },
        { id: 'order-c', updatedAt: at(1000) },
        { id: 'order-d', updatedAt: at(3000) },
        { id: 'order-e', updatedAt: at(1) },
      ];
      const prefix = ctx.id('o');
      for (const s of specs)
        await ctx.store.create({
          id: `${prefix}-${s.id}`,
          folder,
          updatedAt: s.updatedAt,
          createdAt: at(0),
        });
      const expected = ['order-d', 'order-b', 'order-a', 'order-c', 'order-e'].map(
        (x) => `${prefix}-${x}`,
      );
      expect(ids(await ctx.store.list({ folder }))).toEqual(expected);
      expect(ids(await ctx.store.list({ folder, oldestFirst: true }))).toEqual(
        [...expected].reverse(),
      );
    },
  );

  t.test('ties on updatedAt are broken by id in byte order', async (ctx) => {
    const folder = ctx.folder();
    const prefix = ctx.id('tie');
    const updatedAt = new Date(Date.UTC(2024, 3, 1));
    // Case, dot, dash, underscore and digits: a locale collation would order these differently.
    const suffixes = ['a', 'B', 'A', 'b', 'a-b', 'a_b', 'a.b', '0', 'Z9', 'a0'];
    for (const x of suffixes)
      await ctx.store.create({ id: `${prefix}-${x}`, folder, updatedAt, createdAt: updatedAt });
    const bytewise = suffixes
      .map((x) => `${prefix}-${x}`)
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(ids(await ctx.store.list({ folder, oldestFirst: true }))).toEqual(bytewise);
    expect(ids(await ctx.store.list({ folder }))).toEqual([...bytewise].reverse());
    const page1 = await ctx.store.list({ folder, limit: 4 });
    const page2 = await ctx.store.list({
      folder,
      limit: 4,
      startAfter: { updatedAt, id: page1[3]!.id },
    });
    expect(ids([...page1, ...page2])).toEqual([...bytewise].reverse().slice(0, 8));
  });

  t.test('list results are caller-owned', async (ctx) => {
    const folder = ctx.folder();
    const day = (d: number) => new Date(Date.UTC(2024, 0, d));
    const parent = await createSession(ctx, { folder, metadata: { k: 'v' }, updatedAt: day(1) });
    const child = await createSession(ctx, {
      folder,
      parentId: parent.id,
      branchedAtTurn: 0,
      updatedAt: day(2),
    });
    const first = await ctx.store.list({ folder });
    for (const s of first) {
      s.metadata.k = 'mutated';
      s.children.push('ghost');
      s.title = 'mutated';
    }
    const again = await ctx.store.list({ folder, oldestFirst: true });
    expect(again.map((s) => s.title)).toEqual(['', '']);
    expect(again[0]?.metadata).toEqual({ k: 'v' });
    expect(again[0]?.children).toEqual([child.id]);
    expect(again[1]?.children).toEqual([]);
  });

  t.test('list returns summaries with messageCount and children, without messages', async (ctx) => {
    const folder = ctx.folder();
    const parent = await createSession(ctx, {
      folder,
      messages: turns(3),
      title: 'p',
      updatedAt: new Date(Date.UTC(2024, 0, 1)),
    });
    const child = await createSession(ctx, {
      folder,
      parentId: parent.id,
      branchedAtTurn: 2,
      updatedAt: new Date(Date.UTC(2024, 0, 2)),
    });
    const [first, second] = await ctx.store.list({ folder, oldestFirst: true });
    expect(first?.id).toBe(parent.id);
    expect(first?.messageCount).toBe(6);
    expect(first?.children).toEqual([child.id]);
    expect(first?.title).toBe('p');
    expect(first?.revision).toBe(1);
    expect(first?.createdAt).toBeInstanceOf(Date);
    expect(first?.updatedAt).toBeInstanceOf(Date);
    expect((first as unknown as { messages?: unknown }).messages).toBeUndefined();
    expect(second?.parentId).toBe(parent.id);
    expect(second?.branchedAtTurn).toBe(2);
    expect(second?.messageCount).toBe(0);
  });

  t.test('list filters by folder, status, parentId and after', async (ctx) => {
    const f1 = ctx.folder();
    const f2 = ctx.folder();
    const base = Date.UTC(2024, 5, 1);
    const a = await createSession(ctx, {
      folder: f1,
      status: 'active',
      updatedAt: new Date(base + 1),
    });
    const b = await createSession(ctx, {
      folder: f1,
      status: 'done',
      updatedAt: new Date(base + 2),
    });
    const c = await createSession(ctx, {
      folder: f2,
      status: 'done',
      updatedAt: new Date(base + 3),
      parentId: a.id,
      branchedAtTurn: 0,
    });
    expect(ids(await ctx.store.list({ folder: f1 }))).toEqual([b.id, a.id]);
    expect(ids(await ctx.store.list({ folder: f2 }))).toEqual([c.id]);
    expect(ids(await ctx.store.list({ folder: f1, status: 'done' }))).toEqual([b.id]);
    expect(ids(await ctx.store.list({ parentId: a.id }))).toEqual([c.id]);
    expect(ids(await ctx.store.list({ folder: f1, after: new Date(base + 1) }))).toEqual([b.id]);
    expect(ids(await ctx.store.list({ folder: f1, after: new Date(base) }))).toEqual([b.id, a.id]);
    expect(await ctx.store.list({ folder: f1, after: new Date(base + 2) })).toEqual([]);
    expect(await ctx.store.list({ folder: f1, status: 'nope' })).toEqual([]);
  });

  t.test('list hides archived sessions unless includeArchived', async (ctx) => {
    const folder = ctx.folder();
    const live = await createSession(ctx, { folder });
    const archived = await createSession(ctx, { folder, archivedAt: new Date() });
    expect(ids(await ctx.store.list({ folder }))).toEqual([live.id]);
    expect(ids(await ctx.store.list({ folder, includeArchived: true })).sort()).toEqual(
      [live.id, archived.id].sort(),
    );
    const unarchived = await ctx.store.save({ ...archived, archivedAt: undefined });
    expect(unarchived.archivedAt ?? undefined).toBeUndefined();
    expect(ids(await ctx.store.list({ folder })).sort()).toEqual([live.id, archived.id].sort());
  });

  t.test('list query matches title and message text case-insensitively', async (ctx) => {
    const folder = ctx.folder();
    const byTitle = await createSession(ctx, { folder, title: 'Fix the FLUX capacitor' });
    const byText = await createSession(ctx, {
      folder,
      messages: [
        msg('user', 'hello'),
        { role: 'assistant', content: [{ type: 'text', text: 'the Flux is stable' }] },
      ],
    });
    const neither = await createSession(ctx, {
      folder,
      title: 'other',
      messages: [msg('user', 'nothing here')],
    });
    expect(ids(await ctx.store.list({ folder, query: 'flux' })).sort()).toEqual(
      [byTitle.id, byText.id].sort(),
    );
    expect(ids(await ctx.store.list({ folder, query: 'FLUX CAP' }))).toEqual([byTitle.id]);
    expect(await ctx.store.list({ folder, query: 'absent-word' })).toEqual([]);
    const saved = await ctx.store.save({
      ...neither,
      messages: [msg('assistant', 'now with flux')],
    });
    expect(saved.revision).toBe(2);
    expect(ids(await ctx.store.list({ folder, query: 'flux' })).sort()).toEqual(
      [byTitle.id, byText.id, neither.id].sort(),
    );
    await ctx.store.save({ ...byText, messages: [msg('user', 'replaced')] });
    expect(ids(await ctx.store.list({ folder, query: 'flux' })).sort()).toEqual(
      [byTitle.id, neither.id].sort(),
    );
  });

  t.test('list query treats wildcard and regex characters literally', async (ctx) => {
    const folder = ctx.folder();
    const pct = await createSession(ctx, { folder, title: '100% done_ok' });
    await createSession(ctx, { folder, title: '100 percent doneXok' });
    await createSession(ctx, { folder, title: 'a.b*c' });
    expect(ids(await ctx.store.list({ folder, query: '%' }))).toEqual([pct.id]);
    expect(ids(await ctx.store.list({ folder, query: 'done_ok' }))).toEqual([pct.id]);
    expect(await ctx.store.list({ folder, query: '.*' })).toEqual([]);
  });

  t.test(
    'list limit defaults to 50, accepts 1000, and offset skips',
    async (ctx) => {
      const folder = ctx.folder();
      const base = Date.UTC(2024, 0, 1);
      for (let i = 0; i < 55; i++) {
        await createSession(ctx, { folder, updatedAt: new Date(base + i * 10) });
      }
      const all = await ctx.store.list({ folder, limit: 1000 });
      expect(all).toHaveLength(55);
      expect(await ctx.store.list({ folder })).toHaveLength(50);
      expect(await ctx.store.list({ folder, limit: 0 })).toHaveLength(50);
      expect(ids(await ctx.store.list({ folder, limit: 5, offset: 10 }))).toEqual(
        ids(all.slice(10, 15)),
      );
      expect(ids(await ctx.store.list({ folder, limit: 1 }))).toEqual([all[0]!.id]);
      expect(await ctx.store.list({ folder, offset: 55 })).toEqual([]);
    },
    { timeoutFactor: 2 },
  );

  t.test('keyset paging visits every session once in both orders', async (ctx) => {
    const folder = ctx.folder();
    const base = Date.UTC(2024, 0, 1);
    const created: string[] = [];
    for (let i = 0; i < 23; i++) {
      // Pairs share a timestamp so the id tie-break is exercised across page edges.
      const s = await createSession(ctx, {
        folder,
        updatedAt: new Date(base + Math.floor(i / 2) * 1000),
      });
      created.push(s.id);
    }
    for (const oldestFirst of [false, true]) {
      const seen: SessionSummary[] = [];
      let cursor: { updatedAt: Date; id: string } | undefined;
      for (let guard = 0; guard < 20; guard++) {
        const page = await ctx.store.list({
          folder,
          limit: 5,
          oldestFirst,
          ...(cursor ? { startAfter: cursor } : {}),
        });
        seen.push(...page);
        if (page.length < 5) break;
        const last = page[page.length - 1]!;
        cursor = { updatedAt: last.updatedAt, id: last.id };
      }
      expect(ids(seen)).toEqual(ids(await ctx.store.list({ folder, limit: 100, oldestFirst })));
      expect(ids(seen).sort()).toEqual([...created].sort());
    }
  });

  t.test('listing reads no message bodies', async (ctx) => {
    const probe = ctx.init.probes?.messageBodyReads;
    if (!probe) return ctx.skip('needs probes.messageBodyReads');
    const folder = ctx.folder();
    for (let i = 0; i < 5; i++)
      await createSession(ctx, { folder, title: `s${i}`, messages: turns(20, `body${i}`) });
    const before = await probe(ctx.store);
    const listed = await ctx.store.list({ folder });
    const searched = await ctx.store.list({ folder, query: 'body3 answer 19' });
    const byTitle = await ctx.store.list({ folder, query: 's4' });
    expect(listed).toHaveLength(5);
    expect(searched).toHaveLength(1);
    expect(byTitle).toHaveLength(1);
    expect(listed.every((s) => s.messageCount === 40)).toBe(true);
    expect(await probe(ctx.store)).toBe(before);
    await ctx.store.load(listed[0]!.id);
    expect(await probe(ctx.store)).toBeGreaterThan(before);
  });

  t.test('list pages of the whole folder stay consistent with load', async (ctx) => {
    const folder = ctx.folder();
    for (let i = 0; i < 7; i++) await createSession(ctx, { folder, messages: turns(i) });
    const all = await listAll(ctx.store, folder);
    expect(all).toHaveLength(7);
    for (const summary of all) {
      const full = await ctx.store.load(summary.id);
      const { messages, ...rest } = full;
      expect({ ...rest, messageCount: messages.length }).toEqual(summary);
    }
  });

  t.test('a search hides archived sessions unless includeArchived', async (ctx) => {
    // DESIGN: includeArchived (default false) is a filter; filters apply to query too.
    const folder = ctx.folder();
    const live = await createSession(ctx, { folder, title: 'needle live' });
    const archived = await createSession(ctx, {
      folder,
      title: 'needle archived',
      archivedAt: new Date(),
    });
    expect((await ctx.store.list({ folder, query: 'needle' })).map((s) => s.id)).toEqual([live.id]);
    const all = await ctx.store.list({ folder, query: 'NEEDLE', includeArchived: true });
    expect(all.map((s) => s.id).sort()).toEqual([live.id, archived.id].sort());
  });
});
