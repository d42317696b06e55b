import type { Brancher, Committer, EventLog, FullStore, Store } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, race, tally, turn, turns } from './util.js';

type E = Store & EventLog;

/** Append-only, gapless per-session event logs. */
export const eventLogSpec = defineSpec('event-log', 'EventLog', (t) => {
  t.test('append numbers events 1, 2, 3 and events returns them in order', async (ctx) => {
    const store = ctx.store as E;
    const s = await createSession(ctx);
    const before = Date.now();
    const e1 = await store.append(s.id, 'turn.started', { turn: 1 });
    const e2 = await store.append(s.id, 'tool.called', { name: 'grep', args: ['-r', 'x'] });
    const e3 = await store.append(s.id, 'turn.finished');
    expect([e1.sequence, e2.sequence, e3.sequence]).toEqual([1, 2, 3]);
    expect(e1).toMatchObject({ type: 'turn.started', payload: { turn: 1 }, revision: 1 });
    expect(e3.payload).toBeNull();
    expect(e1.at).toBeInstanceOf(Date);
    expect(e1.at.getTime()).toBeGreaterThanOrEqual(before - 1000);
    const all = await store.events(s.id);
    expect(all).toEqual([e1, e2, e3]);
  });

  t.test('afterSequence and limit page through events', async (ctx) => {
    const store = ctx.store as E;
    const s = await createSession(ctx);
    for (let i = 1; i <= 10; i++) await store.append(s.id, 'tick', { i });
    const after7 = await store.events(s.id, { afterSequence: 7 });
    expect(after7.map((e) => e.sequence)).toEqual([8, 9, 10]);
    const page = await store.events(s.id, { afterSequence: 2, limit: 3 });
    expect(page.map((e) => (e.payload as { i: number }).i)).toEqual([3, 4, 5]);
    expect(await store.events(s.id, { afterSequence: 10 })).toEqual([]);
  });

  t.test(
    'sequences stay gapless under concurrent appends',
    async (ctx) => {
      const store = ctx.store as E;
      const peer = (await ctx.peer()) as E;
      const s = await createSession(ctx);
      const jobs = Array.from({ length: 8 }, (_, w) => async () => {
        for (let i = 0; i < 25; i++) await (w % 2 ? peer : store).append(s.id, 'w', { w, i });
      });
      expect(tally(await race(jobs))).toEqual({ ok: 8 });
      const events = await store.events(s.id);
      expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
      const keys = new Set(events.map((e) => JSON.stringify(e.payload)));
      expect(keys.size).toBe(200);
      for (let w = 0; w < 8; w++) {
        const mine = events
          .filter((e) => (e.payload as { w: number }).w === w)
          .map((e) => (e.payload as { i: number }).i);
        expect(mine).toEqual(Array.from({ length: 25 }, (_, i) => i));
      }
    },
    { timeoutFactor: 2 },
  );

  t.testFor(
    'EventLog',
    'events carry the revision current when they were appended',
    async (ctx) => {
      const store = ctx.store as E & Committer;
      const s = await createSession(ctx);
      await store.append(s.id, 'a');
      await store.commit(s.id, { append: turn(0) });
      const b = await store.append(s.id, 'b');
      expect(b.revision).toBe(2);
      expect((await store.load(s.id)).revision).toBe(2);
    },
    { requires: ['Committer'] },
  );

  t.test('events rejects unknown options and a limit over 10000', async (ctx) => {
    // DESIGN: events(id, {afterSequence?, limit?}), limit 1–10000, unknown keys rejected.
    const store = ctx.store as E;
    const s = await createSession(ctx);
    for (let i = 1; i <= 3; i++) await store.append(s.id, 'tick', { i });
    const bad = [
      { afterSequnce: 1 },
      { after: 1 },
      { limit: 2, offset: 1 },
      { limit: 10_001 },
      { limit: 1_000_000 },
    ];
    for (const query of bad) {
      await expectCode(store.events(s.id, query as never), 'invalid_argument');
    }
    expect((await store.events(s.id, { limit: 10_000 })).map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect((await store.events(s.id, { limit: 1 })).map((e) => e.sequence)).toEqual([1]);
    expect(await store.events(s.id, {})).toHaveLength(3);
  });

  t.testFor(
    'EventLog',
    'new, branched and cloned sessions start with an empty log of their own',
    async (ctx) => {
      // DESIGN: sequences 1, 2, 3 … gapless per session; a branch or clone is a new
      // session (its log starts empty; events are not part of the copied history).
      const store = ctx.store as E & Brancher;
      const s = await createSession(ctx, { messages: turns(1) });
      expect(await store.events(s.id)).toEqual([]);
      await store.append(s.id, 'source');
      for (const copy of [await store.branch(s.id, 2), await store.clone(s.id)]) {
        expect(await store.events(copy.id)).toEqual([]);
        const e = await store.append(copy.id, 'own', { id: copy.id });
        expect(e.sequence).toBe(1);
        expect(await store.events(copy.id)).toEqual([e]);
      }
      expect((await store.events(s.id)).map((e) => e.type)).toEqual(['source']);
    },
    { requires: ['Brancher'] },
  );

  t.test('events of a missing session fail with not_found', async (ctx) => {
    const store = ctx.store as E;
    const id = ctx.id();
    await expectCode(store.append(id, 'x', {}), 'not_found');
    await expectCode(store.events(id), 'not_found');
  });

  t.test('delete removes the log; a re-created session starts at 1', async (ctx) => {
    const store = ctx.store as E;
    const s = await createSession(ctx);
    await store.append(s.id, 'x');
    await store.append(s.id, 'y');
    await store.delete(s.id);
    await store.create({ id: s.id });
    expect(await store.events(s.id)).toEqual([]);
    expect((await store.append(s.id, 'z')).sequence).toBe(1);
  });

  t.test('payloads are caller-owned in both directions', async (ctx) => {
    const store = ctx.store as E;
    const s = await createSession(ctx);
    const payload = { list: [1] };
    await store.append(s.id, 'p', payload);
    payload.list.push(2);
    const [e] = await store.events(s.id);
    expect(e?.payload).toEqual({ list: [1] });
    (e!.payload as { list: number[] }).list.push(3);
    expect((await store.events(s.id))[0]?.payload).toEqual({ list: [1] });
  });

  t.test('the event append returns is caller-owned', async (ctx) => {
    // DESIGN: results are owned by the caller; mutating one changes nothing stored.
    const store = ctx.store as FullStore;
    const s = await createSession(ctx);
    const e = await store.append(s.id, 'p', { list: [1] });
    const at = e.at.getTime();
    (e.payload as { list: number[] }).list.push(2);
    e.at.setTime(0);
    const [stored] = await store.events(s.id);
    expect(stored?.payload).toEqual({ list: [1] });
    expect(stored?.at.getTime()).toBe(at);
  });

  t.test('event times are caller-owned', async (ctx) => {
    const store = ctx.store as FullStore;
    const s = await createSession(ctx);
    const e = await store.append(s.id, 'p');
    const at = e.at.getTime();
    const [got] = await store.events(s.id);
    got!.at.setTime(0);
    expect((await store.events(s.id))[0]?.at.getTime()).toBe(at);
  });

  t.test('an event carries the revision a save left', async (ctx) => {
    // DESIGN: append → {sequence, revision, …}, revision the session's at that moment.
    const store = ctx.store as FullStore;
    const s = await createSession(ctx);
    const saved = await store.save({ ...s, title: 'renamed' });
    expect(saved.revision).toBe(2);
    const e = await store.append(s.id, 'after-save');
    expect(e.revision).toBe(2);
    expect((await store.events(s.id))[0]?.revision).toBe(2);
  });
});
