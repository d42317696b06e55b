// Cancellation: every long call takes a trailing `{ signal }`. Aborted before the call →
// `aborted`, nothing written; aborted while a read runs → `aborted`; a write either lands
// whole or writes nothing, never half.
import {
  type Capability,
  type FullStore,
  isSessionKitError,
  type Session,
  type Store,
} from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec, type TestContext } from '../harness.js';
import { createSession, expectCode, listAll, msg, sleep, tick, turns } from './util.js';

type F = FullStore;
const aborted = () => AbortSignal.abort();

/** Each write, as a call taking the call options, with what it needs. */
interface WriteCase {
  name: string;
  requires: Capability[];
  run(store: F, s: Session, call: { signal: AbortSignal }): Promise<unknown>;
}

const WRITES: WriteCase[] = [
  {
    name: 'create',
    requires: [],
    run: (st, s, c) => st.create({ id: `${s.id}-new`, folder: s.folder }, c),
  },
  { name: 'save', requires: [], run: (st, s, c) => st.save({ ...s, title: 'saved' }, c) },
  { name: 'delete', requires: [], run: (st, s, c) => st.delete(s.id, c) },
  {
    name: 'commit',
    requires: ['Committer'],
    run: (st, s, c) => st.commit(s.id, { append: turns(1, 'x'), increment: { turnCount: 1 } }, c),
  },
  { name: 'branch', requires: ['Brancher'], run: (st, s, c) => st.branch(s.id, 1, c) },
  { name: 'clone', requires: ['Brancher'], run: (st, s, c) => st.clone(s.id, c) },
  {
    name: 'saveRuntimeStatus',
    requires: ['RuntimeStatusStore'],
    run: (st, s, c) => st.saveRuntimeStatus(s.id, { phase: 'x' }, c),
  },
  {
    name: 'append',
    requires: ['EventLog'],
    run: (st, s, c) => st.append(s.id, 'kind', { a: 1 }, c),
  },
  { name: 'enforceMax', requires: ['Pruner'], run: (st, _s, c) => st.enforceMax(1, c) },
];

/** What a reader can see of the store's data: every session of the folder, whole. */
async function snapshot(store: F, folder: string): Promise<unknown> {
  const summaries = await listAll(store, folder, { includeArchived: true });
  const sessions = await Promise.all(summaries.map((s) => store.load(s.id)));
  const extra: unknown[] = [];
  for (const s of sessions) {
    if (typeof store.loadRuntimeStatus === 'function')
      extra.push(await store.loadRuntimeStatus(s.id));
    if (typeof store.events === 'function') extra.push(await store.events(s.id));
  }
  return { sessions: sessions.sort((a, b) => (a.id < b.id ? -1 : 1)), extra };
}

/** A folder with an older root and `s`, the newest (so `enforceMax(1)` changes the folder). */
async function seeded(ctx: TestContext): Promise<{ s: Session; folder: string }> {
  const folder = ctx.folder();
  await createSession(ctx, { folder, updatedAt: new Date(Date.now() - 60_000) });
  const s = await createSession(ctx, { folder, messages: turns(2) });
  return { s, folder };
}

const supported = (ctx: TestContext, c: WriteCase) =>
  c.requires.every(
    (cap) => typeof (ctx.store as unknown as Record<string, unknown>)[methodOf(cap)] === 'function',
  );
const methodOf = (cap: Capability) =>
  ({
    Committer: 'commit',
    Brancher: 'branch',
    HistoryReader: 'loadMessages',
    RuntimeStatusStore: 'saveRuntimeStatus',
    SessionRouter: 'bind',
    EventLog: 'append',
    Pruner: 'enforceMax',
    Repairer: 'repair',
  })[cap];

export const signalSpec = defineSpec('signal', 'Store', (t) => {
  t.test('a write whose signal is already aborted is `aborted` and writes nothing', async (ctx) => {
    const store = ctx.store as F;
    for (const c of WRITES.filter((w) => supported(ctx, w))) {
      const { s, folder } = await seeded(ctx);
      const before = await snapshot(store, folder);
      await expectCode(c.run(store, s, { signal: aborted() }), 'aborted');
      expect(await snapshot(store, folder), c.name).toEqual(before);
      expect(await store.list({ folder, query: 'saved' }), c.name).toEqual([]);
    }
  });

  t.test('a read whose signal is already aborted is `aborted`', async (ctx) => {
    const store = ctx.store as F;
    const { s, folder } = await seeded(ctx);
    const signal = aborted();
    await expectCode(store.load(s.id, { signal }), 'aborted');
    await expectCode(store.list({ folder }, { signal }), 'aborted');
    if (typeof store.loadMessages === 'function') {
      await expectCode(store.loadMessages(s.id, { last: 1 }, { signal }), 'aborted');
    }
    if (typeof store.events === 'function')
      await expectCode(store.events(s.id, {}, { signal }), 'aborted');
    if (typeof store.loadRuntimeStatus === 'function')
      await expectCode(store.loadRuntimeStatus(s.id, { signal }), 'aborted');
    if (typeof store.repair === 'function') await expectCode(store.repair({ signal }), 'aborted');
  });

  t.testFor(
    'Brancher',
    'a merge whose signal is already aborted is `aborted` and writes nothing',
    async (ctx) => {
      const store = ctx.store as F;
      const { s, folder } = await seeded(ctx);
      const child = await store.branch(s.id, s.messages.length);
      await store.save({ ...child, messages: [...s.messages, msg('user', 'from the branch')] });
      const before = await snapshot(store, folder);
      await expectCode(store.merge(child.id, { signal: aborted() }), 'aborted');
      expect(await snapshot(store, folder)).toEqual(before);
    },
  );

  t.test('aborting while a read runs rejects it with `aborted`', async (ctx) => {
    const store = ctx.store as F;
    const { s, folder } = await seeded(ctx);
    const reads: ((signal: AbortSignal) => Promise<unknown>)[] = [
      (signal) => store.load(s.id, { signal }),
      (signal) => store.list({ folder }, { signal }),
    ];
    if (typeof store.loadMessages === 'function') {
      reads.push((signal) => store.loadMessages(s.id, {}, { signal }));
    }
    for (const read of reads) {
      const controller = new AbortController();
      const running = read(controller.signal);
      controller.abort();
      await expectCode(running, 'aborted');
    }
  });

  t.test(
    'a write aborted while it runs lands whole or not at all',
    async (ctx) => {
      const store = ctx.store as F;
      // Abort at several moments after the call: before its first I/O, between steps, after
      // it landed. Whatever the outcome, the data is the before or the after, whole.
      for (const c of WRITES.filter((w) => supported(ctx, w))) {
        for (const delay of [0, 1, 2, 5]) {
          const { s, folder } = await seeded(ctx);
          const before = await snapshot(store, folder);
          const controller = new AbortController();
          const running = c.run(store, s, { signal: controller.signal });
          if (delay === 0) await tick();
          else await sleep(delay);
          controller.abort();
          const outcome = await running.then(
            () => 'landed',
            (e: unknown) => {
              if (isSessionKitError(e, 'aborted')) return 'aborted';
              throw e;
            },
          );
          const after = await snapshot(store, folder);
          if (outcome === 'aborted') expect(after, `${c.name} +${delay} ms`).toEqual(before);
          else expect(after, `${c.name} +${delay} ms`).not.toEqual(before);
        }
      }
    },
    { timeoutFactor: 2 },
  );

  t.test('a commit aborted mid-way never leaves half a turn', async (ctx) => {
    const store = ctx.store as F;
    if (typeof store.commit !== 'function') return ctx.skip('needs Committer');
    const s = await createSession(ctx, { messages: [] });
    let landed = 0;
    for (let i = 0; i < 20; i++) {
      const controller = new AbortController();
      const running = store.commit(
        s.id,
        { append: [msg('user', `q${i}`), msg('assistant', `a${i}`)], increment: { turnCount: 1 } },
        { signal: controller.signal },
      );
      if (i % 2) await tick();
      controller.abort();
      await running.then(
        () => landed++,
        (e: unknown) => {
          if (!isSessionKitError(e, 'aborted')) throw e;
        },
      );
    }
    const loaded = await store.load(s.id);
    expect(loaded.turnCount).toBe(landed);
    expect(loaded.messages).toHaveLength(2 * landed);
    for (let k = 0; k < landed; k++) {
      const q = (loaded.messages[2 * k]!.content as string).slice(1);
      expect(loaded.messages[2 * k + 1]).toEqual(msg('assistant', `a${q}`));
    }
  });

  t.test(
    'call options are checked: an unknown key or a non-signal is invalid_argument',
    async (ctx) => {
      const store = ctx.store as Store;
      const { s } = await seeded(ctx);
      await expectCode(store.load(s.id, { signal: 'stop' } as never), 'invalid_argument');
      await expectCode(store.load(s.id, { timeout: 5 } as never), 'invalid_argument');
      await expectCode(store.list({}, 42 as never), 'invalid_argument');
      await expectCode(
        store.save({ ...s, title: 'x' }, { signal: {} } as never),
        'invalid_argument',
      );
      expect((await store.load(s.id)).title).toBe(s.title);
    },
  );
});
