import type {
  Brancher,
  Committer,
  EventLog,
  FullStore,
  Message,
  RuntimeStatusStore,
  SessionSummary,
  Store,
} from '@sessionkit/core';
import { compareListOrder } from '@sessionkit/core/adapter';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import {
  createSession,
  expectCode,
  expectListedAsLoaded,
  msg,
  race,
  tally,
  tick,
  turn,
  turns,
} from './util.js';

type C = Store & Committer;
type Full = C & Brancher & EventLog & RuntimeStatusStore;

/**
 * Deletes `id` through `peer` and creates it again with other fields and messages, then
 * commits `commits` more turns there: the new session's revisions (and any write counter an
 * adapter keeps) reach the values the first one had, so nothing but its identity tells the
 * two apart.
 */
async function recreateThrough(peer: C, id: string, folder: string, commits: number) {
  await peer.delete(id);
  await peer.create({ id, folder, title: 'second life', messages: turns(1, 'new') });
  for (let j = 0; j < commits; j++) {
    await peer.commit(id, { append: [msg('user', `new ${j}`)] });
  }
}
const key = (s: { updatedAt: Date; id: string }) => ({ updatedAt: s.updatedAt, id: s.id });

function strictlyOrdered(xs: SessionSummary[], oldestFirst: boolean): boolean {
  return xs.every((s, i) => i === 0 || compareListOrder(xs[i - 1]!, s, oldestFirst) < 0);
}

/** Races between writers, on one store instance and across two when the initializer can make them. */
export const concurrencySpec = defineSpec('concurrency', 'Store', (t) => {
  t.test('8 saves racing on one base revision: exactly one wins, 7 conflict', async (ctx) => {
    const peer = await ctx.peer();
    const s = await createSession(ctx, { messages: turns(1) });
    const results = await race(
      Array.from(
        { length: 8 },
        (_, i) => () =>
          (i % 2 ? peer : ctx.store).save({
            ...s,
            title: `writer ${i}`,
            messages: turns(i + 2, `w${i}`),
          }),
      ),
    );
    expect(tally(results)).toEqual({ ok: 1, conflict: 7 });
    const winner = results.findIndex((r) => r.status === 'fulfilled');
    const final = await ctx.store.load(s.id);
    expect(final.revision).toBe(2);
    expect(final.title).toBe(`writer ${winner}`);
    expect(final.messages).toEqual(turns(winner + 2, `w${winner}`));
  });

  t.testFor(
    'Committer',
    '8 commits racing on one expectedRevision: exactly one wins',
    async (ctx) => {
      const store = ctx.store as C;
      const peer = (await ctx.peer()) as C;
      const s = await createSession(ctx, { messages: turns(1) });
      const results = await race(
        Array.from(
          { length: 8 },
          (_, i) => () =>
            (i % 2 ? peer : store).commit(s.id, {
              expectedRevision: 1,
              append: [msg('user', `w${i}`)],
              patch: { title: `w${i}` },
            }),
        ),
      );
      expect(tally(results)).toEqual({ ok: 1, conflict: 7 });
      const winner = results.findIndex((r) => r.status === 'fulfilled');
      const final = await store.load(s.id);
      expect(final.revision).toBe(2);
      expect(final.title).toBe(`w${winner}`);
      expect(final.messages).toEqual([...turns(1), msg('user', `w${winner}`)]);
    },
  );

  t.testFor(
    'Committer',
    '8 commits racing on one expectedMessageCount: exactly one wins',
    async (ctx) => {
      const store = ctx.store as C;
      const peer = (await ctx.peer()) as C;
      const s = await createSession(ctx, { messages: turns(2) });
      const results = await race(
        Array.from(
          { length: 8 },
          (_, i) => () =>
            (i % 2 ? peer : store).commit(s.id, {
              expectedMessageCount: 4,
              append: [msg('user', `w${i}`)],
            }),
        ),
      );
      expect(tally(results)).toEqual({ ok: 1, conflict: 7 });
      expect((await store.load(s.id)).messages).toHaveLength(5);
    },
  );

  t.testFor(
    'Committer',
    '8 writers x 50 unconditional appends: all 400 messages present once each',
    async (ctx) => {
      const store = ctx.store as C;
      const peer = (await ctx.peer()) as C;
      const s = await createSession(ctx);
      const results = await race(
        Array.from({ length: 8 }, (_, w) => async () => {
          for (let i = 0; i < 50; i++) {
            await (w % 2 ? peer : store).commit(s.id, {
              append: [msg('user', `w${w}:${i}`)],
              increment: { turnCount: 1 },
            });
          }
        }),
      );
      expect(tally(results)).toEqual({ ok: 8 });
      const final = await store.load(s.id);
      const texts = final.messages.map((m) => (m as Message).content as string);
      expect(texts).toHaveLength(400);
      expect(new Set(texts).size).toBe(400);
      for (let w = 0; w < 8; w++) {
        const mine = texts
          .filter((x) => x.startsWith(`w${w}:`))
          .map((x) => Number(x.split(':')[1]));
        expect(mine).toEqual(Array.from({ length: 50 }, (_, i) => i));
      }
      expect(final.revision).toBe(401);
      expect(final.turnCount).toBe(400);
    },
    { timeoutFactor: 3 },
  );

  t.test('8 creates racing on one id: exactly one wins, 7 get exists', async (ctx) => {
    const peer = await ctx.peer();
    const id = ctx.id();
    const results = await race(
      Array.from(
        { length: 8 },
        (_, i) => () => (i % 2 ? peer : ctx.store).create({ id, title: `c${i}` }),
      ),
    );
    expect(tally(results)).toEqual({ ok: 1, exists: 7 });
    const winner = results.findIndex((r) => r.status === 'fulfilled');
    expect((await ctx.store.load(id)).title).toBe(`c${winner}`);
  });

  t.test(
    'keyset paging stays exact while another writer updates unseen sessions',
    async (ctx) => {
      const peer = await ctx.peer();
      const folder = ctx.folder();
      const base = Date.UTC(2024, 0, 1);
      const all: string[] = [];
      for (let i = 0; i < 40; i++) {
        const s = await createSession(ctx, {
          folder,
          updatedAt: new Date(base + i * 1000),
          title: `s${i}`,
        });
        all.push(s.id);
      }
      for (const oldestFirst of [false, true]) {
        const touched = new Set<string>();
        const seen: SessionSummary[] = [];
        let cursor: { updatedAt: Date; id: string } | undefined;
        for (let guard = 0; guard < 40; guard++) {
          const page = await ctx.store.list({
            folder,
            limit: 6,
            oldestFirst,
            ...(cursor ? { startAfter: cursor } : {}),
          });
          expect(strictlyOrdered(page, oldestFirst)).toBe(true);
          seen.push(...page);
          if (page.length < 6) break;
          cursor = key(page[page.length - 1]!);
          // Another writer now moves two sessions that this scan has not reached yet.
          const seenIds = new Set(seen.map((s) => s.id));
          const unseen = all.filter((id) => !seenIds.has(id) && !touched.has(id));
          const victims = oldestFirst ? unseen.slice(-2) : unseen.slice(0, 2);
          // Every other page the cursor's own session moves too: the cursor must not care.
          if (guard % 2 === 1) victims.push(cursor.id);
          for (const id of victims) {
            const current = await peer.load(id);
            await peer.save({ ...current, title: `${current.title} (edited)` });
            touched.add(id);
          }
        }
        const seenIds = seen.map((s) => s.id);
        for (const id of all) {
          if (touched.has(id)) continue;
          expect(
            seenIds.filter((x) => x === id),
            `untouched session ${id} must be listed exactly once`,
          ).toHaveLength(1);
        }
        if (!oldestFirst) {
          // Newest first, an updated session can only move behind the cursor: nothing repeats.
          expect(new Set(seenIds).size).toBe(seenIds.length);
        }
        expect(
          strictlyOrdered(
            seen.filter((s) => !touched.has(s.id)),
            oldestFirst,
          ),
        ).toBe(true);
      }
    },
    { timeoutFactor: 2 },
  );

  t.test('listing order holds while writers commit concurrently', async (ctx) => {
    const peer = await ctx.peer();
    const folder = ctx.folder();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await createSession(ctx, { folder })).id);
    let done = false;
    const writer = (async () => {
      try {
        for (let round = 0; round < 30; round++) {
          const id = ids[(round * 7) % ids.length]!;
          const current = await peer.load(id);
          await peer.save({ ...current, title: `r${round}` }).catch(() => {});
        }
      } finally {
        done = true;
      }
    })();
    let pages = 0;
    while (!done) {
      for (const oldestFirst of [false, true]) {
        const page = await ctx.store.list({ folder, oldestFirst, limit: 100 });
        expect(page).toHaveLength(12);
        expect(strictlyOrdered(page, oldestFirst)).toBe(true);
        expect(new Set(page.map((s) => s.id)).size).toBe(12);
      }
      pages++;
      await tick();
    }
    await writer;
    expect(pages).toBeGreaterThan(0);
  });

  t.testFor('Committer', 'a commit racing a delete never resurrects the session', async (ctx) => {
    const store = ctx.store as C;
    const peer = (await ctx.peer()) as C;
    for (let round = 0; round < 10; round++) {
      const folder = ctx.folder();
      const s = await createSession(ctx, { folder, messages: turns(1) });
      const results = await race<unknown>([
        () => peer.commit(s.id, { append: turns(1, 'late') }),
        () => store.delete(s.id),
        () => peer.commit(s.id, { append: turns(1, 'later') }),
      ]);
      expect(results[1]!.status).toBe('fulfilled');
      for (const r of [results[0]!, results[2]!]) {
        if (r.status === 'rejected') await expectCode(Promise.reject(r.reason), 'not_found');
      }
      await expectCode(store.load(s.id), 'not_found');
      expect(await store.list({ folder, includeArchived: true })).toEqual([]);
    }
  });

  t.testFor(
    'Committer',
    'a session deleted and re-created through another instance: the next commit lands on the new one',
    async (ctx) => {
      const store = ctx.store as C;
      const peer = (await ctx.peer()) as C;
      const folder = ctx.folder();
      // The peer's re-created session is written 0 … 3 times, so at one of them it has as
      // many writes as the first session had when this instance last wrote it.
      for (let commits = 0; commits <= 3; commits++) {
        const id = ctx.id();
        await store.create({ id, folder, title: 'first life', messages: turns(1, 'old') });
        for (let i = 0; i < 2; i++) {
          await store.commit(id, {
            append: [msg('user', `old ${i}`)],
            increment: { turnCount: 1 },
          });
        }
        await recreateThrough(peer, id, folder, commits);
        const result = await store.commit(id, {
          append: [msg('assistant', 'after')],
          increment: { turnCount: 1 },
        });
        const texts = [
          ...turns(1, 'new').map((m) => m.content),
          ...Array.from({ length: commits }, (_, j) => `new ${j}`),
          'after',
        ];
        expect(result.revision).toBe(commits + 2);
        expect(result.messageCount).toBe(texts.length);
        const loaded = await expectListedAsLoaded(store, id);
        expect(loaded.title).toBe('second life');
        expect(loaded.turnCount).toBe(1);
        expect(loaded.revision).toBe(commits + 2);
        expect(loaded.messages.map((m) => (m as Message).content)).toEqual(texts);
        expect(await peer.load(id)).toEqual(loaded);
      }
    },
    { timeoutFactor: 2 },
  );

  t.testFor(
    'Committer',
    'a session deleted and re-created through another instance: merge, branch, promotion, status and events see the new one',
    async (ctx) => {
      const store = ctx.store as Full;
      const peer = (await ctx.peer()) as Full;
      const folder = ctx.folder();
      const id = ctx.id();
      const parent = await store.create({ id: ctx.id(), folder, title: 'old parent' });
      await store.create({ id, folder, parentId: parent.id, messages: turns(2, 'old') });
      await store.commit(id, { append: [msg('user', 'old 0')], increment: { turnCount: 1 } });
      await store.saveRuntimeStatus(id, { life: 1 });
      await store.append(id, 'old', { life: 1 });
      await store.append(id, 'old', { life: 1 });

      // Re-created as the child of another parent, with a branch of its own.
      const newParent = await peer.create({ id: ctx.id(), folder, title: 'new parent' });
      await peer.delete(id);
      await peer.create({ id, folder, parentId: newParent.id, messages: turns(1, 'new') });
      await peer.commit(id, { append: [msg('user', 'new 0')] });
      const branch = await peer.branch(id, 3);
      await peer.commit(branch.id, { append: [msg('assistant', 'on the branch')] });

      // Events and status belong to the new session only.
      expect(await store.loadRuntimeStatus(id)).toBeNull();
      const event = await store.append(id, 'new', { life: 2 });
      expect(event).toMatchObject({ sequence: 1, revision: 2, type: 'new' });
      expect((await store.events(id)).map((e) => e.payload)).toEqual([{ life: 2 }]);
      await store.saveRuntimeStatus(id, { life: 2 });
      expect(await peer.loadRuntimeStatus(id)).toEqual({ life: 2 });

      // A merge of the new session's branch fast-forwards the new session.
      const merged = await store.merge(branch.id);
      const expected = [...turns(1, 'new').map((m) => m.content), 'new 0', 'on the branch'];
      expect(merged.messages.map((m) => (m as Message).content)).toEqual(expected);
      expect(merged.revision).toBe(3);
      expect(merged.children).toEqual([branch.id]);

      // A branch of it starts from the new history.
      const again = await store.branch(id, 2);
      expect(again.messages).toEqual(turns(1, 'new'));

      // Deleting its new parent promotes it to a root, and a commit after that keeps both.
      await store.delete(newParent.id);
      const result = await store.commit(id, { append: [msg('user', 'last')] });
      expect(result).toMatchObject({ revision: 4, messageCount: expected.length + 1 });
      const loaded = await expectListedAsLoaded(store, id);
      expect(loaded.parentId).toBeUndefined();
      expect(loaded.turnCount).toBe(0);
      expect(loaded.messages.map((m) => (m as Message).content)).toEqual([...expected, 'last']);
      expect((await store.load(parent.id)).children).toEqual([]);
      expect(await peer.load(id)).toEqual(loaded);
    },
    { requires: ['Brancher', 'EventLog', 'RuntimeStatusStore'], timeoutFactor: 2 },
  );

  t.testFor(
    'Brancher',
    'a merge racing a delete of the parent never resurrects the parent',
    async (ctx) => {
      const store = ctx.store as FullStore;
      const peer = (await ctx.peer()) as FullStore;
      for (let round = 0; round < 10; round++) {
        const parent = await createSession(ctx, { messages: turns(1) });
        const child = await store.branch(parent.id, 2);
        await store.commit(child.id, { append: turn(1) });
        const results = await race<unknown>([
          () => peer.merge(child.id),
          () => store.delete(parent.id),
        ]);
        expect(results[1]!.status).toBe('fulfilled');
        await expectCode(store.load(parent.id), 'not_found');
        const loaded = await store.load(child.id);
        expect(loaded.parentId).toBeUndefined();
      }
    },
    { requires: ['Committer'] },
  );

  t.testFor(
    'Brancher',
    'a branch racing a delete of its parent never points at it',
    async (ctx) => {
      const store = ctx.store as FullStore;
      const peer = (await ctx.peer()) as FullStore;
      for (let round = 0; round < 10; round++) {
        const parent = await createSession(ctx, { messages: turns(1) });
        const results = await race<unknown>([
          () => peer.branch(parent.id, 1),
          () => store.delete(parent.id),
        ]);
        expect(results[1]!.status).toBe('fulfilled');
        await expectCode(store.load(parent.id), 'not_found');
        const r = results[0]!;
        if (r.status === 'rejected') {
          await expectCode(Promise.reject(r.reason), 'not_found');
          continue;
        }
        const branch = await store.load((r.value as { id: string }).id);
        expect(branch.parentId).toBeUndefined();
      }
    },
  );

  t.testFor(
    'Committer',
    'a save racing an unconditional commit never drops the commit',
    async (ctx) => {
      // DESIGN: per-session linearizability; unconditional appends lose nothing.
      const store = ctx.store as FullStore;
      const peer = (await ctx.peer()) as FullStore;
      for (let round = 0; round < 10; round++) {
        const s = await createSession(ctx, { messages: turns(1) });
        const results = await race<unknown>([
          () => store.save({ ...s, title: 'saved' }),
          () => peer.commit(s.id, { append: turns(1, 'c') }),
        ]);
        expect(results[1]!.status).toBe('fulfilled');
        if (results[0]!.status === 'rejected') {
          await expectCode(Promise.reject(results[0]!.reason), 'conflict');
        }
        const loaded = await store.load(s.id);
        expect(loaded.messages).toEqual([...turns(1), ...turns(1, 'c')]);
      }
    },
  );
});
