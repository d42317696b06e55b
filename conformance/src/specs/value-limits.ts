import {
  type FullStore,
  isEventLog,
  isRuntimeStatusStore,
  type JsonValue,
  MAX_JSON_DEPTH,
  MAX_MESSAGE_INDEX,
  MAX_SHORT_TEXT_LENGTH,
  MAX_TITLE_LENGTH,
} from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { type BadInput, observe, seedStore } from './bad-input.js';
import { createSession, expectCode, expectListedAsLoaded, msg } from './util.js';

/** A JSON value `depth` levels deep (arrays and objects alternating), built without recursion. */
export function nestedJson(depth: number, leaf: JsonValue = 'leaf'): JsonValue {
  let v: JsonValue = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? { k: v } : [v];
  return v;
}

const TOO_DEEP = nestedJson(MAX_JSON_DEPTH + 1);
const FAR_TOO_DEEP = nestedJson(100_000);
const YEAR_10000 = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1);
/** The latest date a store keeps: 9999-12-31T23:59:59.999Z. */
const LATEST_DATE = new Date(YEAR_10000.getTime() - 1);
const YEAR_0 = new Date(-62_135_596_800_000 - 1);
const long = (n: number) => 'x'.repeat(n);

/** The short text fields a commit's patch can set (caps: `MAX_SHORT_TEXT_LENGTH`). */
const PATCHED_TEXT_FIELDS = ['folder', 'status', 'model', 'provider', 'mode'] as const;

/** Sessions a broken adapter might create while failing to reject these cases. */
const CREATED_IDS = [
  'deep-msg',
  'deep-state',
  'far-deep',
  'year-10000',
  'year-0',
  'big-turn',
  'long-title',
  'long-folder',
  'long-status',
  'long-model',
  'long-provider',
  'long-mode',
  'long-meta-key',
  'long-meta-value',
  'nul-title',
  'surrogate-folder',
];

const CASES: BadInput[] = [
  // Nesting: at most 512 levels, on every write that takes JSON.
  {
    name: 'create with a message nested 513 levels deep',
    capability: 'Store',
    call: (s, { folder }) => s.create({ id: 'deep-msg', folder, messages: [TOO_DEEP as never] }),
  },
  {
    name: 'create with state nested 513 levels deep',
    capability: 'Store',
    call: (s, { folder }) => s.create({ id: 'deep-state', folder, state: TOO_DEEP }),
  },
  {
    name: 'create with a message nested 100,000 levels deep',
    capability: 'Store',
    call: (s, { folder }) =>
      s.create({ id: 'far-deep', folder, messages: [FAR_TOO_DEEP as never] }),
  },
  {
    name: 'save with state nested 513 levels deep',
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, state: TOO_DEEP }),
  },
  {
    name: 'save with a message nested 513 levels deep',
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, messages: [TOO_DEEP as never] }),
  },
  {
    name: 'commit appending a message nested 513 levels deep',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { append: [TOO_DEEP as never] }),
  },
  {
    name: 'commit replacing with a message nested 513 levels deep',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { replace: [TOO_DEEP as never] }),
  },
  {
    name: 'commit patching state nested 513 levels deep',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { patch: { state: TOO_DEEP } }),
  },
  {
    name: 'an event payload nested 513 levels deep',
    capability: 'EventLog',
    call: (s, { session }) => s.append(session.id, 'deep', TOO_DEEP),
  },
  {
    name: 'a runtime status nested 513 levels deep',
    capability: 'RuntimeStatusStore',
    call: (s, { session }) => s.saveRuntimeStatus(session.id, TOO_DEEP),
  },
  // Counters: the result of an increment is checked, not only the increment.
  {
    name: 'an increment that takes tokenCount past MAX_SAFE_INTEGER',
    capability: 'Committer',
    call: (s, { session }) =>
      s.commit(session.id, {
        patch: { tokenCount: Number.MAX_SAFE_INTEGER },
        increment: { tokenCount: Number.MAX_SAFE_INTEGER },
      }),
  },
  {
    name: 'an increment that takes costUsd to Infinity',
    capability: 'Committer',
    call: (s, { session }) =>
      s.commit(session.id, { patch: { costUsd: 1.7e308 }, increment: { costUsd: 1.7e308 } }),
  },
  {
    name: 'an increment that takes tokenCount below 0',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { increment: { tokenCount: -1 } }),
  },
  {
    name: 'an increment that takes costUsd below 0',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { increment: { costUsd: -0.5 } }),
  },
  {
    name: 'an increment that takes turnCount below 0 together with an append',
    capability: 'Committer',
    call: (s, { session }) =>
      s.commit(session.id, { append: [msg('user', 'lost?')], increment: { turnCount: -1 } }),
  },
  {
    name: 'a fractional turnCount increment',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { increment: { turnCount: 0.5 } }),
  },
  {
    name: 'a non-finite costUsd increment',
    capability: 'Committer',
    call: (s, { session }) =>
      s.commit(session.id, { increment: { costUsd: Number.POSITIVE_INFINITY } }),
  },
  {
    name: 'an increment that takes turnCount past MAX_SAFE_INTEGER',
    capability: 'Committer',
    call: (s, { session }) =>
      s.commit(session.id, {
        patch: { turnCount: Number.MAX_SAFE_INTEGER },
        increment: { turnCount: 1 },
      }),
  },
  // A commit's patch checks every text field as create and save do (a stored value past
  // a cap, or holding NUL, would leave a session no read accepts).
  ...PATCHED_TEXT_FIELDS.flatMap((field): BadInput[] =>
    [
      ['over its cap', long(MAX_SHORT_TEXT_LENGTH + 1)],
      ['with NUL', 'a\u0000b'],
      ['with a lone surrogate', 'a\uD800b'],
    ].map(([what, value]) => ({
      name: `a commit patching ${field} ${what}`,
      capability: 'Committer',
      call: (s, { session }) => s.commit(session.id, { patch: { [field]: value } }),
    })),
  ),
  // Router fields: every part of the tuple is capped, not only the channel.
  {
    name: 'bind with a chatKey over its cap',
    capability: 'SessionRouter',
    call: (s, { session }) => s.bind('telegram', long(MAX_SHORT_TEXT_LENGTH + 1), '', session.id),
  },
  {
    name: 'bind with a thread over its cap',
    capability: 'SessionRouter',
    call: (s, { session }) => s.bind('telegram', 'c', long(MAX_SHORT_TEXT_LENGTH + 1), session.id),
  },
  {
    name: 'save with tokenCount past MAX_SAFE_INTEGER',
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, tokenCount: Number.MAX_SAFE_INTEGER + 2 }),
  },
  {
    name: 'save with a fractional turnCount',
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, turnCount: 1.5 }),
  },
  // Dates: years 1–9999.
  {
    name: 'create with updatedAt in the year 10000',
    capability: 'Store',
    call: (s, { folder }) => s.create({ id: 'year-10000', folder, updatedAt: YEAR_10000 }),
  },
  {
    name: 'create with createdAt before the year 1',
    capability: 'Store',
    call: (s, { folder }) => s.create({ id: 'year-0', folder, createdAt: YEAR_0 }),
  },
  {
    name: 'save with archivedAt in the year 10000',
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, archivedAt: YEAR_10000 }),
  },
  {
    name: 'commit patching archivedAt before the year 1',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { patch: { archivedAt: YEAR_0 } }),
  },
  {
    name: 'list after a date in the year 10000',
    capability: 'Store',
    call: (s) => s.list({ after: YEAR_10000 }),
  },
  {
    name: 'list startAfter a date before the year 1',
    capability: 'Store',
    call: (s) => s.list({ startAfter: { updatedAt: YEAR_0, id: 'x' } }),
  },
  // Counts of messages fit in 2^31 − 1.
  {
    name: 'create with branchedAtTurn 2^31',
    capability: 'Store',
    call: (s, { folder, session }) =>
      s.create({ id: 'big-turn', folder, parentId: session.id, branchedAtTurn: 2 ** 31 }),
  },
  {
    name: 'commit with expectedMessageCount 1.5',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { expectedMessageCount: 1.5, append: [] }),
  },
  // Text caps, on create as on every other write.
  {
    name: `create with a title of ${MAX_TITLE_LENGTH + 1} chars`,
    capability: 'Store',
    call: (s) => s.create({ id: 'long-title', title: long(MAX_TITLE_LENGTH + 1) }),
  },
  ...(['folder', 'status', 'model', 'provider', 'mode'] as const).map(
    (field): BadInput => ({
      name: `create with a ${field} of ${MAX_SHORT_TEXT_LENGTH + 1} chars`,
      capability: 'Store',
      call: (s) => s.create({ id: `long-${field}`, [field]: long(MAX_SHORT_TEXT_LENGTH + 1) }),
    }),
  ),
  {
    name: `create with a metadata key of ${MAX_SHORT_TEXT_LENGTH + 1} chars`,
    capability: 'Store',
    call: (s) =>
      s.create({ id: 'long-meta-key', metadata: { [long(MAX_SHORT_TEXT_LENGTH + 1)]: 'v' } }),
  },
  {
    name: 'create with a metadata value over 1 MiB of chars',
    capability: 'Store',
    call: (s) => s.create({ id: 'long-meta-value', metadata: { k: long((1 << 20) + 1) } }),
  },
  {
    name: 'create with a NUL in the title',
    capability: 'Store',
    call: (s) => s.create({ id: 'nul-title', title: 'a\u0000b' }),
  },
  {
    name: 'create with a lone surrogate in the folder',
    capability: 'Store',
    call: (s) => s.create({ id: 'surrogate-folder', folder: 'a\uD800b' }),
  },
  {
    name: `save with a title of ${MAX_TITLE_LENGTH + 1} chars`,
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, title: long(MAX_TITLE_LENGTH + 1) }),
  },
  ...(['folder', 'status', 'model', 'provider', 'mode'] as const).map(
    (field): BadInput => ({
      name: `save with a ${field} of ${MAX_SHORT_TEXT_LENGTH + 1} chars`,
      capability: 'Store',
      call: (s, { session }) => s.save({ ...session, [field]: long(MAX_SHORT_TEXT_LENGTH + 1) }),
    }),
  ),
  {
    name: `commit patching a title of ${MAX_TITLE_LENGTH + 1} chars`,
    capability: 'Committer',
    call: (s, { session }) =>
      s.commit(session.id, { patch: { title: long(MAX_TITLE_LENGTH + 1) } }),
  },
  {
    name: `commit patching a metadata key of ${MAX_SHORT_TEXT_LENGTH + 1} chars`,
    capability: 'Committer',
    call: (s, { session }) =>
      s.commit(session.id, { patch: { metadata: { [long(MAX_SHORT_TEXT_LENGTH + 1)]: 'v' } } }),
  },
  {
    name: 'save with a metadata value over 1 MiB of chars',
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, metadata: { k: long((1 << 20) + 1) } }),
  },
  {
    name: `an event type of ${MAX_SHORT_TEXT_LENGTH + 1} chars`,
    capability: 'EventLog',
    call: (s, { session }) => s.append(session.id, long(MAX_SHORT_TEXT_LENGTH + 1), null),
  },
  {
    name: `a router channel of ${MAX_SHORT_TEXT_LENGTH + 1} chars`,
    capability: 'SessionRouter',
    call: (s, { session }) => s.bind(long(MAX_SHORT_TEXT_LENGTH + 1), 'c', '', session.id),
  },
  {
    name: `a list query of ${MAX_SHORT_TEXT_LENGTH + 1} chars`,
    capability: 'Store',
    call: (s) => s.list({ query: long(MAX_SHORT_TEXT_LENGTH + 1) }),
  },
];

/** Value limits (DESIGN, Data model): the same on every adapter, checked before any I/O. */
export const valueLimitsSpec = defineSpec('value-limits', 'Store', (t) => {
  for (const c of CASES) {
    t.testFor(c.capability, `rejects ${c.name}`, async (ctx) => {
      const store = ctx.store as FullStore;
      const seed = await seedStore(store, ctx.id(), ctx.folder());
      const before = await observe(store, seed, CREATED_IDS);
      await expectCode(c.call(store, seed), c.code ?? 'invalid_argument');
      expect(await observe(store, seed, CREATED_IDS)).toBe(before);
    });
  }

  t.test('JSON nested 512 levels deep round-trips in messages and state', async (ctx) => {
    const deep = nestedJson(MAX_JSON_DEPTH);
    const s = await createSession(ctx, { messages: [deep as never], state: deep });
    const loaded = await expectListedAsLoaded(ctx.store, s.id);
    expect(loaded.messages).toEqual([deep]);
    expect(loaded.state).toEqual(deep);
    const saved = await ctx.store.save({ ...loaded, title: 'still deep' });
    expect(saved.state).toEqual(deep);
    expect((await ctx.store.list({ folder: loaded.folder }))[0]?.state).toEqual(deep);
  });

  t.testFor(
    'EventLog',
    'event payloads and runtime status nested 512 levels round-trip',
    async (ctx) => {
      const store = ctx.store as FullStore;
      const deep = nestedJson(MAX_JSON_DEPTH);
      const s = await createSession(ctx);
      if (isEventLog(store)) {
        await store.append(s.id, 'deep', deep);
        expect((await store.events(s.id))[0]?.payload).toEqual(deep);
      }
      if (isRuntimeStatusStore(store)) {
        await store.saveRuntimeStatus(s.id, deep);
        expect(await store.loadRuntimeStatus(s.id)).toEqual(deep);
      }
    },
  );

  t.test('__proto__, constructor and prototype keys round-trip as data', async (ctx) => {
    const tricky = (): Record<string, JsonValue> =>
      JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":{"name":"c"},"prototype":[1]}');
    const metadata = JSON.parse('{"__proto__":"m","constructor":"c","prototype":"p"}');
    const s = await createSession(ctx, {
      messages: [tricky() as never],
      state: tricky(),
      metadata,
    });
    const loaded = await expectListedAsLoaded(ctx.store, s.id);
    expect(JSON.stringify(loaded.messages[0])).toBe(JSON.stringify(tricky()));
    expect(JSON.stringify(loaded.state)).toBe(JSON.stringify(tricky()));
    expect(Object.getPrototypeOf(loaded.state)).toBe(Object.prototype);
    expect(Object.keys(loaded.metadata).sort()).toEqual(['__proto__', 'constructor', 'prototype']);
    expect(Object.getOwnPropertyDescriptor(loaded.metadata, '__proto__')?.value).toBe('m');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    const saved = await ctx.store.save({ ...loaded, title: 'saved' });
    expect(JSON.stringify(saved.state)).toBe(JSON.stringify(tricky()));
  });

  t.testFor('Committer', 'prototype-named keys survive commits, events and status', async (ctx) => {
    const store = ctx.store as FullStore;
    const tricky = () => JSON.parse('{"__proto__":{"x":1},"prototype":2}') as JsonValue;
    const s = await createSession(ctx);
    await store.commit(s.id, {
      append: [tricky() as never],
      patch: { state: tricky(), metadata: JSON.parse('{"__proto__":"patched"}') },
    });
    const loaded = await expectListedAsLoaded(ctx.store, s.id);
    expect(JSON.stringify(loaded.messages)).toBe(JSON.stringify([tricky()]));
    expect(JSON.stringify(loaded.state)).toBe(JSON.stringify(tricky()));
    expect(Object.getOwnPropertyDescriptor(loaded.metadata, '__proto__')?.value).toBe('patched');
    await store.commit(s.id, { patch: { metadata: JSON.parse('{"__proto__":null}') } });
    expect(Object.keys((await store.load(s.id)).metadata)).toEqual([]);
    if (isEventLog(store)) {
      await store.append(s.id, 'tricky', tricky());
      expect(JSON.stringify((await store.events(s.id))[0]?.payload)).toBe(JSON.stringify(tricky()));
    }
    if (isRuntimeStatusStore(store)) {
      await store.saveRuntimeStatus(s.id, tricky());
      expect(JSON.stringify(await store.loadRuntimeStatus(s.id))).toBe(JSON.stringify(tricky()));
    }
  });

  t.test('counters at the edges of their range round-trip exactly', async (ctx) => {
    const s = await createSession(ctx, {
      tokenCount: Number.MAX_SAFE_INTEGER,
      turnCount: Number.MAX_SAFE_INTEGER,
      costUsd: 1.7e308,
    });
    const loaded = await expectListedAsLoaded(ctx.store, s.id);
    expect(loaded).toMatchObject({
      tokenCount: Number.MAX_SAFE_INTEGER,
      turnCount: Number.MAX_SAFE_INTEGER,
      costUsd: 1.7e308,
    });
    const exact = await createSession(ctx, { costUsd: 0.1 + 0.2 });
    expect((await ctx.store.load(exact.id)).costUsd).toBe(0.1 + 0.2);
  });

  t.testFor('Committer', 'increments add exactly, up to the edge of the range', async (ctx) => {
    const store = ctx.store as FullStore;
    const s = await createSession(ctx, { tokenCount: Number.MAX_SAFE_INTEGER - 2, costUsd: 0.1 });
    await store.commit(s.id, { increment: { tokenCount: 2, costUsd: 0.2, turnCount: 3 } });
    await store.commit(s.id, { increment: { turnCount: -3 } });
    const loaded = await expectListedAsLoaded(ctx.store, s.id);
    expect(loaded).toMatchObject({
      tokenCount: Number.MAX_SAFE_INTEGER,
      costUsd: 0.1 + 0.2,
      turnCount: 0,
    });
  });

  t.test('-0 is stored as 0, in counters and inside JSON values', async (ctx) => {
    const s = await createSession(ctx, {
      tokenCount: -0,
      costUsd: -0,
      turnCount: -0,
      messages: [{ role: 'user', content: 'zero', n: -0 } as never],
      state: { z: -0 },
    });
    const loaded = await expectListedAsLoaded(ctx.store, s.id);
    for (const v of [loaded.tokenCount, loaded.costUsd, loaded.turnCount]) {
      expect(Object.is(v, 0)).toBe(true);
    }
    expect(Object.is((loaded.messages[0] as unknown as { n: number }).n, 0)).toBe(true);
    expect(Object.is((loaded.state as { z: number }).z, 0)).toBe(true);
  });

  t.testFor('Committer', 'a commit patching counters to -0 stores 0', async (ctx) => {
    const store = ctx.store as FullStore;
    const s = await createSession(ctx, { tokenCount: 3, costUsd: 1.5, turnCount: 2 });
    await store.commit(s.id, { patch: { tokenCount: -0, costUsd: -0, turnCount: -0 } });
    const loaded = await expectListedAsLoaded(store, s.id);
    for (const v of [loaded.tokenCount, loaded.costUsd, loaded.turnCount]) {
      expect(Object.is(v, 0)).toBe(true);
    }
  });

  t.test('dates at the edges of the years 1–9999 round-trip', async (ctx) => {
    const first = new Date(YEAR_0.getTime() + 1);
    const last = new Date(YEAR_10000.getTime() - 1);
    const s = await createSession(ctx, { createdAt: first, updatedAt: last, archivedAt: first });
    const loaded = await expectListedAsLoaded(ctx.store, s.id);
    expect(loaded.createdAt.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(loaded.updatedAt.toISOString()).toBe('9999-12-31T23:59:59.999Z');
    expect(loaded.archivedAt?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
  });

  // DESIGN: every write moves updatedAt strictly forward, and no date past year 9999 is
  // stored. At the latest date both cannot hold, so the write is refused, not stored as
  // year 10000 (which would leave a session no read accepts).
  t.test(
    'a save over a session last written at the latest date is refused, nothing written',
    async (ctx) => {
      const s = await createSession(ctx, {
        updatedAt: LATEST_DATE,
        messages: [msg('user', 'kept')],
      });
      const loaded = await ctx.store.load(s.id);
      await expectCode(ctx.store.save({ ...loaded, title: 'changed' }), 'invalid_argument');
      expect(await expectListedAsLoaded(ctx.store, s.id)).toEqual(loaded);
    },
  );

  t.testFor(
    'Committer',
    'a commit to a session last written at the latest date is refused, nothing written',
    async (ctx) => {
      const store = ctx.store as FullStore;
      const s = await createSession(ctx, {
        createdAt: LATEST_DATE,
        messages: [msg('user', 'kept')],
      });
      const loaded = await store.load(s.id);
      expect(loaded.updatedAt.toISOString()).toBe('9999-12-31T23:59:59.999Z');
      await expectCode(store.commit(s.id, { append: [msg('user', 'more')] }), 'invalid_argument');
      await expectCode(store.commit(s.id, { patch: { title: 'changed' } }), 'invalid_argument');
      await expectCode(store.commit(s.id, { increment: { tokenCount: 1 } }), 'invalid_argument');
      expect(await expectListedAsLoaded(store, s.id)).toEqual(loaded);
      if (typeof store.loadMessages === 'function')
        expect(await store.loadMessages(s.id)).toEqual([msg('user', 'kept')]);
      // A session a millisecond before it takes that millisecond, and no more.
      const before = await createSession(ctx, { updatedAt: new Date(LATEST_DATE.getTime() - 1) });
      const r = await store.commit(before.id, { append: [msg('user', 'last')] });
      expect(r.updatedAt.toISOString()).toBe('9999-12-31T23:59:59.999Z');
      await expectCode(
        store.commit(before.id, { append: [msg('user', 'one more')] }),
        'invalid_argument',
      );
      expect((await expectListedAsLoaded(store, before.id)).messages).toEqual([
        msg('user', 'last'),
      ]);
    },
  );

  t.testFor(
    'Brancher',
    'a merge into a parent last written at the latest date is refused, nothing written',
    async (ctx) => {
      const store = ctx.store as FullStore;
      const parent = await createSession(ctx, {
        updatedAt: LATEST_DATE,
        messages: [msg('user', 'p')],
      });
      const child = await store.branch(parent.id, 1);
      await store.save({
        ...(await store.load(child.id)),
        messages: [msg('user', 'p'), msg('user', 'c')],
      });
      const before = await store.load(parent.id);
      await expectCode(store.merge(child.id), 'invalid_argument');
      expect(await expectListedAsLoaded(store, parent.id)).toEqual(before);
    },
  );

  t.test('branchedAtTurn up to 2^31 − 1 round-trips', async (ctx) => {
    const s = await createSession(ctx, { parentId: ctx.id(), branchedAtTurn: MAX_MESSAGE_INDEX });
    expect((await expectListedAsLoaded(ctx.store, s.id)).branchedAtTurn).toBe(MAX_MESSAGE_INDEX);
  });

  t.test('text at the length caps round-trips', async (ctx) => {
    const short = long(MAX_SHORT_TEXT_LENGTH);
    const s = await createSession(ctx, {
      title: long(MAX_TITLE_LENGTH),
      status: short,
      model: short,
      provider: short,
      mode: short,
      metadata: { [short]: long(1 << 20) },
    });
    const loaded = await ctx.store.load(s.id);
    expect(loaded.title).toHaveLength(MAX_TITLE_LENGTH);
    expect(loaded.metadata[short]).toHaveLength(1 << 20);
    const unique = ctx.folder();
    const folder = unique + long(MAX_SHORT_TEXT_LENGTH - unique.length);
    const inFolder = await createSession(ctx, { folder });
    expect((await ctx.store.list({ folder })).map((x) => x.id)).toEqual([inFolder.id]);
  });
});
