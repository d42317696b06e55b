import type { FullStore, Session } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, expectListedAsLoaded, msg, sleep, turns } from './util.js';

const ids = (xs: { id: string }[]) => xs.map((x) => x.id);

/** The base contract: create, load, save, delete, list, close. */
export const storeSpec = defineSpec('store', 'Store', (t) => {
  t.test('create returns revision 1 with defaults', async (ctx) => {
    const before = Date.now();
    const s = await ctx.store.create({ id: ctx.id() });
    expect(s.revision).toBe(1);
    expect(s.title).toBe('');
    expect(s.folder).toBe('');
    expect(s.status).toBe('active');
    expect(s.model).toBe('');
    expect(s.provider).toBe('');
    expect(s.tokenCount).toBe(0);
    expect(s.costUsd).toBe(0);
    expect(s.turnCount).toBe(0);
    expect(s.metadata).toEqual({});
    expect(s.messages).toEqual([]);
    expect(s.children).toEqual([]);
    expect(s.parentId ?? undefined).toBeUndefined();
    expect(s.archivedAt ?? undefined).toBeUndefined();
    expect(s.createdAt).toBeInstanceOf(Date);
    expect(s.updatedAt).toBeInstanceOf(Date);
    expect(s.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
    const loaded = await ctx.store.load(s.id);
    expect(loaded).toEqual(s);
  });

  t.test('create keeps every given field and load returns it', async (ctx) => {
    const folder = ctx.folder();
    const input = {
      id: ctx.id(),
      title: 'Refactor the parser',
      folder,
      model: 'model-x',
      provider: 'provider-y',
      tokenCount: 1234,
      costUsd: 0.75,
      turnCount: 3,
      metadata: { tool: 'tui', 'key.with.dots': 'v' },
      status: 'paused',
      messages: turns(3),
      createdAt: new Date('2024-01-02T03:04:05.678Z'),
      updatedAt: new Date('2024-01-02T03:04:06.789Z'),
      archivedAt: new Date('2024-02-03T04:05:06.007Z'),
      mode: 'plan',
      state: { plan: [{ step: 1, done: false }], goal: null, agents: ['a', 'b'] },
    };
    const created = await ctx.store.create(input);
    const loaded = await ctx.store.load(input.id);
    for (const s of [created, loaded]) {
      expect(s).toMatchObject({ ...input, revision: 1, children: [] });
      expect(s.createdAt.getTime()).toBe(input.createdAt.getTime());
      expect(s.updatedAt.getTime()).toBe(input.updatedAt.getTime());
      expect(s.archivedAt?.getTime()).toBe(input.archivedAt.getTime());
    }
  });

  t.test('create on an existing id fails with exists and keeps the original', async (ctx) => {
    const s = await createSession(ctx, { title: 'original', messages: turns(1) });
    await expectCode(ctx.store.create({ id: s.id, title: 'impostor' }), 'exists');
    const loaded = await ctx.store.load(s.id);
    expect(loaded.title).toBe('original');
    expect(loaded.messages).toEqual(turns(1));
    expect(loaded.revision).toBe(1);
  });

  t.test('load of a missing session fails with not_found', async (ctx) => {
    await expectCode(ctx.store.load(ctx.id()), 'not_found');
  });

  t.test('create does not keep a reference to its argument', async (ctx) => {
    const messages = turns(2);
    const metadata: Record<string, string> = { a: '1' };
    const s = await createSession(ctx, { messages, metadata, state: { n: 1 } });
    messages.push(msg('user', 'sneaky'));
    (messages[0] as { content: string }).content = 'changed';
    metadata.a = 'changed';
    const loaded = await ctx.store.load(s.id);
    expect(loaded.messages).toEqual(turns(2));
    expect(loaded.metadata).toEqual({ a: '1' });
  });

  t.test('load returns a caller-owned copy', async (ctx) => {
    const s = await createSession(ctx, {
      messages: turns(2),
      metadata: { a: '1' },
      state: { list: [1] },
    });
    const first = await ctx.store.load(s.id);
    first.messages.push(msg('user', 'x'));
    (first.messages[0] as { content: string }).content = 'mutated';
    first.metadata.a = 'mutated';
    (first.state as { list: number[] }).list.push(2);
    first.children.push('ghost');
    const again = await ctx.store.load(s.id);
    expect(again.messages).toEqual(turns(2));
    expect(again.metadata).toEqual({ a: '1' });
    expect(again.state).toEqual({ list: [1] });
    expect(again.children).toEqual([]);
  });

  t.test(
    'save with the stored revision replaces the session and bumps the revision',
    async (ctx) => {
      const s = await createSession(ctx, { title: 'v1', messages: turns(1) });
      const changes = {
        title: 'v2',
        status: 'done',
        messages: turns(2),
        metadata: { k: 'v' },
        tokenCount: 10,
        costUsd: 0.5,
        turnCount: 2,
        state: { x: 1 },
        mode: 'code',
      };
      const edited: Session = { ...s, ...structuredClone(changes) };
      const snapshot = structuredClone(edited);
      await sleep(2);
      const saved = await ctx.store.save(edited);
      expect(edited).toEqual(snapshot);
      expect(saved).not.toBe(edited);
      expect(saved.revision).toBe(2);
      expect(saved.updatedAt.getTime()).toBeGreaterThan(s.updatedAt.getTime());
      expect(saved.createdAt.getTime()).toBe(s.createdAt.getTime());
      const loaded = await ctx.store.load(s.id);
      expect(loaded).toEqual(saved);
      expect(loaded).toMatchObject(changes);
    },
  );

  t.test('save without state, mode or archivedAt clears them', async (ctx) => {
    // DESIGN: save replaces the stored session; absent optional fields (state, mode,
    // archivedAt) are cleared.
    const folder = ctx.folder();
    const s = await createSession(ctx, {
      folder,
      state: { plan: ['a'] },
      mode: 'plan',
      archivedAt: new Date(Date.UTC(2024, 1, 1)),
    });
    const { state: _state, mode: _mode, archivedAt: _archivedAt, ...rest } = s;
    const saved = await ctx.store.save({ ...rest, title: 'cleared' });
    for (const x of [saved, await ctx.store.load(s.id)]) {
      expect(x.state ?? undefined).toBeUndefined();
      expect(x.mode ?? undefined).toBeUndefined();
      expect(x.archivedAt ?? undefined).toBeUndefined();
      expect(x.title).toBe('cleared');
    }
    const [summary] = await ctx.store.list({ folder });
    expect(summary?.id).toBe(s.id);
    expect(summary?.state ?? undefined).toBeUndefined();
    expect(summary?.mode ?? undefined).toBeUndefined();
    const again = await ctx.store.save({ ...saved, state: { plan: ['b'] }, mode: 'code' });
    const cleared = await ctx.store.save({ ...again, state: undefined, mode: undefined });
    expect(cleared.state ?? undefined).toBeUndefined();
    expect(cleared.mode ?? undefined).toBeUndefined();
    await expectListedAsLoaded(ctx.store, s.id);
  });

  t.test('list follows a save that moves the folder and archives', async (ctx) => {
    // DESIGN: a summary always equals the loaded session without its messages after every
    // kind of write; folder matches exactly; archived sessions are hidden by default.
    const from = ctx.folder();
    const to = ctx.folder();
    const s = await createSession(ctx, { folder: from, messages: turns(1) });
    const moved = await ctx.store.save({ ...s, folder: to, messages: turns(2) });
    expect(await ctx.store.list({ folder: from })).toEqual([]);
    expect((await ctx.store.list({ folder: to })).map((x) => [x.id, x.messageCount])).toEqual([
      [s.id, 4],
    ]);
    const archived = await ctx.store.save({ ...moved, archivedAt: new Date() });
    expect(await ctx.store.list({ folder: to })).toEqual([]);
    await expectListedAsLoaded(ctx.store, s.id);
    await ctx.store.save({ ...archived, archivedAt: undefined, folder: from });
    expect((await ctx.store.list({ folder: from })).map((x) => x.id)).toEqual([s.id]);
    expect(await ctx.store.list({ folder: to, includeArchived: true })).toEqual([]);
    await expectListedAsLoaded(ctx.store, s.id);
  });

  t.test('results never carry undefined properties', async (ctx) => {
    // DESIGN: undefined object properties are dropped, as serialising backends do.
    const undefinedKeys = (x: object) =>
      Object.entries(x)
        .filter(([, v]) => v === undefined)
        .map(([k]) => k);
    const folder = ctx.folder();
    const s = await createSession(ctx, { folder, messages: turns(1) });
    const saved = await ctx.store.save({ ...s, title: 'x' });
    const child = await createSession(ctx, { folder, parentId: s.id, branchedAtTurn: 1 });
    const savedChild = await ctx.store.save({ ...child, title: 'child' });
    await ctx.store.delete(s.id);
    const promoted = await ctx.store.load(child.id);
    const results: object[] = [s, saved, child, savedChild, promoted];
    results.push(await ctx.store.load(child.id), ...(await ctx.store.list({ folder })));
    for (const r of results) expect(undefinedKeys(r)).toEqual([]);
  });

  t.test('save stores -0 counters as 0', async (ctx) => {
    // DESIGN: -0 is stored as 0.
    const s = await createSession(ctx);
    const saved = await ctx.store.save({ ...s, tokenCount: -0, costUsd: -0, turnCount: -0 });
    for (const x of [saved, await ctx.store.load(s.id)]) {
      expect(Object.is(x.tokenCount, 0)).toBe(true);
      expect(Object.is(x.costUsd, 0)).toBe(true);
      expect(Object.is(x.turnCount, 0)).toBe(true);
    }
  });

  t.test('a session re-created under a deleted id has no children of the old one', async (ctx) => {
    // DESIGN: children is derived (the ids whose parentId is this session); delete
    // promotes the children of the deleted session to its parent.
    const root = await createSession(ctx);
    const mid = await createSession(ctx, { parentId: root.id, branchedAtTurn: 0 });
    const kid = await createSession(ctx, { parentId: mid.id, branchedAtTurn: 0 });
    await ctx.store.delete(mid.id);
    const again = await ctx.store.create({ id: mid.id });
    expect(again.children).toEqual([]);
    expect((await ctx.store.load(mid.id)).children).toEqual([]);
    expect((await ctx.store.load(root.id)).children).toEqual([kid.id]);
    expect((await ctx.store.load(kid.id)).parentId).toBe(root.id);
  });

  t.test('save does not keep a reference to its argument', async (ctx) => {
    const s = await createSession(ctx);
    const edited = { ...s, messages: turns(2), metadata: { a: '1' }, state: { list: [1] } };
    await ctx.store.save(edited);
    edited.messages.push(msg('user', 'after save'));
    (edited.messages[0] as { content: string }).content = 'mutated';
    edited.metadata.a = 'mutated';
    (edited.state as { list: number[] }).list.push(2);
    const loaded = await ctx.store.load(s.id);
    expect(loaded.messages).toEqual(turns(2));
    expect(loaded.metadata).toEqual({ a: '1' });
    expect(loaded.state).toEqual({ list: [1] });
  });

  t.test('save with a stale revision fails with conflict and writes nothing', async (ctx) => {
    const s = await createSession(ctx, { title: 'v1' });
    const saved = await ctx.store.save({ ...s, title: 'v2' });
    await expectCode(ctx.store.save({ ...s, title: 'stale', messages: turns(5) }), 'conflict');
    await expectCode(
      ctx.store.save({ ...s, revision: saved.revision + 1, title: 'future' }),
      'conflict',
    );
    const loaded = await ctx.store.load(s.id);
    expect(loaded).toEqual(saved);
  });

  t.test('save of a missing session fails with not_found', async (ctx) => {
    const s = await createSession(ctx);
    await ctx.store.delete(s.id);
    await expectCode(ctx.store.save(s), 'not_found');
    await expectCode(ctx.store.load(s.id), 'not_found');
  });

  t.test('save keeps children, parentId and createdAt as the store has them', async (ctx) => {
    const parent = await createSession(ctx);
    const child = await createSession(ctx, { parentId: parent.id, branchedAtTurn: 0 });
    const staleParent = { ...parent, children: [], title: 'renamed', createdAt: new Date(0) };
    const saved = await ctx.store.save(staleParent);
    expect(saved.children).toEqual([child.id]);
    expect(saved.createdAt.getTime()).toBe(parent.createdAt.getTime());
    const savedChild = await ctx.store.save({ ...child, parentId: undefined, title: 'x' });
    expect(savedChild.parentId).toBe(parent.id);
    expect((await ctx.store.load(child.id)).parentId).toBe(parent.id);
  });

  t.test('save ignores a given branchedAtTurn, as it ignores parentId', async (ctx) => {
    const parent = await createSession(ctx, { messages: turns(1) });
    const child = await createSession(ctx, { parentId: parent.id, branchedAtTurn: 1 });
    const saved = await ctx.store.save({ ...child, branchedAtTurn: 2, title: 'a' });
    expect(saved.branchedAtTurn).toBe(1);
    const again = await ctx.store.save({ ...saved, branchedAtTurn: undefined, title: 'b' });
    expect(again.branchedAtTurn).toBe(1);
    expect((await expectListedAsLoaded(ctx.store, child.id)).branchedAtTurn).toBe(1);
  });

  // DESIGN: children are "the ids whose parentId is this session, ascending in byte order"
  // (not a locale's order, which puts "a" before "B"), however and whenever they were made.
  t.test('children are every child, in byte order, whenever and however made', async (ctx) => {
    const parentId = ctx.id();
    const suffixes = ['a', 'B', 'A', 'b', '_', '0'];
    // Created before their parent (an import restores trees in any order)…
    for (const x of suffixes.slice(0, 3))
      await ctx.store.create({ id: `${parentId}-${x}`, parentId });
    await ctx.store.create({ id: parentId, folder: ctx.folder() });
    // …and after it; one of them archived.
    for (const x of suffixes.slice(3)) await ctx.store.create({ id: `${parentId}-${x}`, parentId });
    const archived = await ctx.store.load(`${parentId}-b`);
    await ctx.store.save({ ...archived, archivedAt: new Date() });
    const expected = ['0', 'A', 'B', '_', 'a', 'b'].map((x) => `${parentId}-${x}`);
    expect((await expectListedAsLoaded(ctx.store, parentId)).children).toEqual(expected);
    const listed = await ctx.store.list({ parentId, includeArchived: true, limit: 10 });
    expect(ids(listed).sort()).toEqual([...expected].sort());
  });

  t.test('without createdAt, an older updatedAt is the creation time', async (ctx) => {
    const updatedAt = new Date(Date.UTC(2020, 4, 5));
    const s = await createSession(ctx, { updatedAt });
    expect(s.createdAt.getTime()).toBe(updatedAt.getTime());
    const loaded = await expectListedAsLoaded(ctx.store, s.id);
    expect(loaded.createdAt.getTime()).toBe(updatedAt.getTime());
    expect(loaded.updatedAt.getTime()).toBe(updatedAt.getTime());
  });

  t.test('updatedAt moves forward on every write', async (ctx) => {
    let s = await createSession(ctx);
    let last = s.updatedAt.getTime();
    for (let i = 0; i < 5; i++) {
      s = await ctx.store.save({ ...s, title: `v${i}` });
      expect(s.updatedAt.getTime()).toBeGreaterThan(last);
      last = s.updatedAt.getTime();
    }
  });

  t.test('delete removes the session and a second delete fails with not_found', async (ctx) => {
    const folder = ctx.folder();
    const s = await createSession(ctx, { folder, messages: turns(2) });
    await ctx.store.delete(s.id);
    await expectCode(ctx.store.load(s.id), 'not_found');
    expect(await ctx.store.list({ folder })).toEqual([]);
    await expectCode(ctx.store.delete(s.id), 'not_found');
    const again = await ctx.store.create({ id: s.id, folder });
    expect(again.revision).toBe(1);
    expect(again.messages).toEqual([]);
  });

  t.test('delete promotes children to the grandparent', async (ctx) => {
    const g = await createSession(ctx);
    const p = await createSession(ctx, { parentId: g.id, branchedAtTurn: 0 });
    const c1 = await createSession(ctx, { parentId: p.id, branchedAtTurn: 0 });
    const c2 = await createSession(ctx, { parentId: p.id, branchedAtTurn: 0 });
    expect((await ctx.store.load(p.id)).children).toEqual([c1.id, c2.id].sort());
    await ctx.store.delete(p.id);
    expect((await ctx.store.load(c1.id)).parentId).toBe(g.id);
    expect((await ctx.store.load(c2.id)).parentId).toBe(g.id);
    expect((await ctx.store.load(g.id)).children).toEqual([c1.id, c2.id].sort());
    const listed = await ctx.store.list({ parentId: g.id });
    expect(ids(listed).sort()).toEqual([c1.id, c2.id].sort());
    expect(await ctx.store.list({ parentId: p.id })).toEqual([]);
  });

  t.test('a promoted child without a branch point keeps none', async (ctx) => {
    // DESIGN: a promoted branch's branchedAtTurn is re-based (the smaller of its own and
    // the deleted session's); a child that has none has nothing to re-base.
    const g = await createSession(ctx);
    const p = await createSession(ctx, { parentId: g.id, branchedAtTurn: 0 });
    const c = await createSession(ctx, { parentId: p.id });
    await ctx.store.delete(p.id);
    const promoted = await ctx.store.load(c.id);
    expect(promoted.parentId).toBe(g.id);
    expect(promoted.branchedAtTurn ?? undefined).toBeUndefined();
    expect(Object.keys(promoted)).not.toContain('branchedAtTurn');
  });

  t.test('delete of a root promotes its children to roots', async (ctx) => {
    const root = await createSession(ctx);
    const child = await createSession(ctx, { parentId: root.id, branchedAtTurn: 0 });
    const grandchild = await createSession(ctx, { parentId: child.id, branchedAtTurn: 0 });
    await ctx.store.delete(root.id);
    const c = await ctx.store.load(child.id);
    expect(c.parentId ?? undefined).toBeUndefined();
    expect(c.children).toEqual([grandchild.id]);
    expect((await ctx.store.load(grandchild.id)).parentId).toBe(child.id);
  });

  t.test('dates round-trip with millisecond precision', async (ctx) => {
    const dates = [
      new Date('1970-01-01T00:00:00.001Z'),
      new Date('2024-02-29T23:59:59.999Z'),
      new Date('2038-01-19T03:14:08.123Z'),
      new Date('2999-12-31T12:00:00.456Z'),
    ];
    const folder = ctx.folder();
    for (const d of dates) {
      const s = await createSession(ctx, { folder, createdAt: d, updatedAt: d, archivedAt: d });
      const loaded = await ctx.store.load(s.id);
      expect(loaded.createdAt.getTime()).toBe(d.getTime());
      expect(loaded.updatedAt.getTime()).toBe(d.getTime());
      expect(loaded.archivedAt?.getTime()).toBe(d.getTime());
      // A cursor just after `d` with the empty id starts the page at the rows stamped `d`.
      const cursor = { updatedAt: new Date(d.getTime() + 1), id: '' };
      const [summary] = await ctx.store.list({
        folder,
        includeArchived: true,
        startAfter: cursor,
        limit: 1,
      });
      expect(summary?.id).toBe(s.id);
      expect(summary?.updatedAt.getTime()).toBe(d.getTime());
    }
    const s = await createSession(ctx);
    const saved = await ctx.store.save(s);
    expect(Number.isInteger(saved.updatedAt.getTime())).toBe(true);
    expect((await ctx.store.load(s.id)).updatedAt.getTime()).toBe(saved.updatedAt.getTime());
  });

  t.test('unicode and arbitrary JSON round-trip exactly', async (ctx) => {
    const weird = {
      role: 'user',
      content: [
        {
          type: 'text',
          text: 'héllo wörld — 日本語 — עברית — 🧑‍💻🏳️‍🌈 — e\u0301 — \u0000 nul — \t\n\r — "quotes" \\ back',
        },
      ],
      metadata: {
        nested: { deep: [1, -2.5, 1e-7, 12345678901234, 0, true, false, null, '', [], {}] },
        'key with spaces': 'v',
        dollar$key: '$',
        ключ: 'значение',
        'emoji_🔑': '🗝️',
      },
    };
    let deep: unknown = 'bottom';
    for (let i = 0; i < 64; i++) deep = { level: i, inner: deep, list: [i, `${i}`] };
    const messages = [
      weird,
      { role: 'assistant', content: 'ok', metadata: { deep } },
      'a bare string message',
      42,
      null,
      [1, [2, [3]]],
    ];
    const s = await createSession(ctx, {
      title: 'Ünïcödé 🚀 title — 中文',
      folder: '/home/ユーザー/プロジェクト',
      metadata: { clé: 'valeur ✓' },
      messages: messages as never,
      state: { weird } as never,
    });
    const loaded = await ctx.store.load(s.id);
    expect(loaded.messages).toEqual(messages);
    expect(loaded.title).toBe('Ünïcödé 🚀 title — 中文');
    expect(loaded.folder).toBe('/home/ユーザー/プロジェクト');
    expect(loaded.metadata).toEqual({ clé: 'valeur ✓' });
    expect(loaded.state).toEqual({ weird });
    expect(
      ids(await ctx.store.list({ folder: '/home/ユーザー/プロジェクト', query: '🚀 TITLE' })),
    ).toEqual([s.id]);
  });

  t.test(
    'a 20 MB transcript round-trips',
    async (ctx) => {
      const chunk = 'x'.repeat(9_000);
      const messages = Array.from({ length: 2_300 }, (_, i) => ({
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `${i}:${chunk}:é✓`,
      }));
      const bytes = Buffer.byteLength(JSON.stringify(messages));
      expect(bytes).toBeGreaterThan(20_000_000);
      const folder = ctx.folder();
      const s = await createSession(ctx, { folder, messages });
      const loaded = await ctx.store.load(s.id);
      expect(loaded.messages.length).toBe(messages.length);
      expect(loaded.messages).toEqual(messages);
      const [summary] = await ctx.store.list({ folder });
      expect(summary?.messageCount).toBe(messages.length);
    },
    { timeoutFactor: 4 },
  );

  t.test('close is idempotent and later calls fail with closed', async (ctx) => {
    const s = await createSession(ctx);
    await ctx.store.close();
    await ctx.store.close();
    await expectCode(ctx.store.load(s.id), 'closed');
    await expectCode(ctx.store.list({}), 'closed');
    await expectCode(ctx.store.create({ id: ctx.id() }), 'closed');
    await expectCode(ctx.store.save(s), 'closed');
    await expectCode(ctx.store.delete(s.id), 'closed');
    // Every optional capability the store has refuses work after close too.
    const c = ctx.store as Partial<FullStore>;
    const calls: [string, (() => Promise<unknown>) | undefined][] = [
      ['commit', c.commit && (() => c.commit!(s.id, { append: turns(1) }))],
      ['branch', c.branch && (() => c.branch!(s.id, 0))],
      ['clone', c.clone && (() => c.clone!(s.id))],
      ['merge', c.merge && (() => c.merge!(s.id))],
      ['loadMessages', c.loadMessages && (() => c.loadMessages!(s.id))],
      ['loadMessages with a window', c.loadMessages && (() => c.loadMessages!(s.id, { last: 1 }))],
      ['saveRuntimeStatus', c.saveRuntimeStatus && (() => c.saveRuntimeStatus!(s.id, {}))],
      ['loadRuntimeStatus', c.loadRuntimeStatus && (() => c.loadRuntimeStatus!(s.id))],
      ['bind', c.bind && (() => c.bind!('telegram', 'c', '', s.id))],
      ['resolve', c.resolve && (() => c.resolve!('telegram', 'c', '', ''))],
      ['unbind', c.unbind && (() => c.unbind!('telegram', 'c', ''))],
      ['follow', c.follow && (() => c.follow!('telegram', 'c', 'tui'))],
      ['touch', c.touch && (() => c.touch!('telegram', 'c', ''))],
      ['recent', c.recent && (() => c.recent!(10))],
      ['append', c.append && (() => c.append!(s.id, 'x', {}))],
      ['events', c.events && (() => c.events!(s.id))],
      ['enforceMax', c.enforceMax && (() => c.enforceMax!(1))],
      ['repair', c.repair && (() => c.repair!())],
    ];
    for (const [name, call] of calls) {
      if (!call) continue;
      await expectCode(call(), 'closed').catch((e: unknown) => {
        throw new Error(`${name} after close: ${e instanceof Error ? e.message : String(e)}`);
      });
    }
  });
});
