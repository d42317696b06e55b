// Value limits on PostgreSQL: counter results checked in the database, -0, exact
// costUsd, __proto__ keys as data on every path, dates never read back as Invalid Date.
import { isSessionKitError, type JsonValue, type Message } from '@sessionkit/core';
import { errorsFor, incrementedCost } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the PostgreSQL value tests did not run');

const MAX = Number.MAX_VALUE;
/** The own `__proto__` property of an object (a plain read would give its prototype). */
const ownKey = (o: object) => Object.getOwnPropertyDescriptor(o, '__proto__')?.value as unknown;
const proto = (json: string) => JSON.parse(json) as Record<string, JsonValue>;

async function withStore(fn: (store: PostgresStore) => Promise<void>): Promise<void> {
  const store = await freshStore();
  try {
    await fn(store);
  } finally {
    await destroyStore(store);
  }
}

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(
    () => undefined,
    (e: unknown) => (isSessionKitError(e) ? e.code : `raw: ${String(e)}`),
  );
}

describe.runIf(available)('postgres › counters', () => {
  it('an increment whose result leaves the range is invalid_argument and writes nothing (append and patch paths)', () =>
    withStore(async (store) => {
      await store.create({ id: 'c', tokenCount: Number.MAX_SAFE_INTEGER, costUsd: 1.7e308 });
      const before = await store.load('c');
      const m: Message = { role: 'user', content: 'never stored' };
      for (const input of [
        { append: [m], increment: { tokenCount: Number.MAX_SAFE_INTEGER } },
        { append: [m], increment: { costUsd: 1.7e308 } },
        { append: [m], increment: { turnCount: -1 } },
        { append: [m], patch: { title: 'x' }, increment: { tokenCount: 1 } },
        { replace: [m], increment: { costUsd: 1.7e308 } },
        { patch: { tokenCount: 5 }, increment: { tokenCount: -6 } },
        { patch: { costUsd: 1 }, increment: { costUsd: -1.5 } },
      ]) {
        const e = await store.commit('c', input).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(isSessionKitError(e, 'invalid_argument'), JSON.stringify(input)).toBe(true);
        expect((e as Error).message).toMatch(/increment\.(tokenCount|turnCount|costUsd)/);
      }
      expect(await store.load('c')).toEqual(before);
      // In range: written, and a patch then an increment as core applies them.
      await store.commit('c', { patch: { tokenCount: 5 }, increment: { tokenCount: -5 } });
      expect((await store.load('c')).tokenCount).toBe(0);
    }));

  it('the SQL cost check decides exactly as core incrementedCost at the overflow boundary', () =>
    withStore(async (store) => {
      const errors = errorsFor('postgres');
      const cases: [number, number][] = [
        [MAX, MAX],
        [MAX, 2 ** 970],
        [MAX, 2 ** 970 - 2 ** 918],
        [MAX, 2 ** 969],
        [MAX - 2 ** 971, 2 ** 971],
        [2 ** 1023, 2 ** 1023],
        [2 ** 1023, 2 ** 1023 - 2 ** 970],
        [1.7e308, 1.7e308],
        [5e-324, 5e-324],
        [1, -1],
        [0.1, -0.30000000000000004],
        [0.3, -0.1],
        [0, 1e-320],
      ];
      for (const [c, inc] of cases) {
        let js = true;
        try {
          incrementedCost(errors, 'x', c, inc);
        } catch {
          js = false;
        }
        const r = await admin().query<{ ok: boolean }>(
          `SELECT "${store.schema}".sk_cost_ok($1::float8, $2::float8) AS ok`,
          [c, inc],
        );
        expect(r.rows[0]!.ok, `${c} + ${inc}`).toBe(js);
      }
    }));

  it('-0 is stored as 0 and costUsd round-trips exactly as a double', () =>
    withStore(async (store) => {
      const costs = [0.1 + 0.2, 5e-324, MAX, 123456.78901234567, 1 / 3];
      for (const [i, cost] of costs.entries()) {
        const s = await store.create({ id: `k${i}`, costUsd: cost, tokenCount: -0 });
        expect(Object.is(s.tokenCount, 0)).toBe(true);
        expect((await store.load(`k${i}`)).costUsd).toBe(cost);
        expect((await store.list({ limit: 1000 })).find((x) => x.id === `k${i}`)!.costUsd).toBe(
          cost,
        );
      }
      await store.create({ id: 'z', costUsd: 0.1 });
      await store.commit('z', { increment: { costUsd: 0.2 } });
      expect((await store.load('z')).costUsd).toBe(0.1 + 0.2);
      await store.commit('z', { patch: { costUsd: -0, turnCount: -0 } });
      const z = await store.load('z');
      expect(Object.is(z.costUsd, 0) && Object.is(z.turnCount, 0)).toBe(true);
      const saved = await store.save({ ...z, costUsd: -0 });
      expect(Object.is(saved.costUsd, 0)).toBe(true);
    }));
});

describe.runIf(available)('postgres › __proto__, constructor and prototype keys are data', () => {
  it('round-trip in messages, state, metadata (create, commit patch, save, branch, clone), events and status', () =>
    withStore(async (store) => {
      const value = proto('{"__proto__":{"constructor":{"prototype":1}},"a":[{"__proto__":null}]}');
      const meta = proto('{"__proto__":"p","constructor":"c","prototype":"q"}') as Record<
        string,
        string
      >;
      const message = proto('{"role":"user","content":"hi","__proto__":{"x":1}}');
      const s = await store.create({
        id: 'p',
        messages: [message as unknown as Message],
        state: value,
        metadata: meta,
      });
      const check = (got: unknown, want: unknown) => {
        expect(JSON.stringify(got)).toBe(JSON.stringify(want));
        expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
      };
      check(s.state, value);
      const loaded = await store.load('p');
      check(loaded.state, value);
      check(loaded.messages[0], message);
      expect(Object.hasOwn(loaded.metadata, '__proto__')).toBe(true);
      expect(ownKey(loaded.metadata)).toBe('p');
      await store.commit('p', {
        patch: { metadata: proto('{"__proto__":"patched"}') as Record<string, string> },
      });
      expect(ownKey((await store.load('p')).metadata)).toBe('patched');
      const saved = await store.save({ ...(await store.load('p')), state: value });
      check(saved.state, value);
      expect(Object.hasOwn((await store.load('p')).metadata, '__proto__')).toBe(true);
      const b = await store.branch('p', 1);
      expect(ownKey(b.metadata)).toBe('patched');
      const c = await store.clone('p');
      expect(ownKey((await store.load(c.id)).metadata)).toBe('patched');
      check((await store.load(c.id)).state, value);
      const e = await store.append('p', 'evt', value);
      check(e.payload, value);
      check((await store.events('p'))[0]!.payload, value);
      await store.saveRuntimeStatus('p', value);
      check(await store.loadRuntimeStatus('p'), value);
      check((await store.loadMessages('p', { last: 1 }))[0], message);
    }));
});

describe.runIf(available)('postgres › dates outside years 1–9999 written behind the store', () => {
  it('never Invalid Date: years after 9999 and BC are corrupt on load and listed as their Date', () =>
    withStore(async (store) => {
      await store.create({ id: 'd', messages: [] });
      const s = `"${store.schema}"`;
      for (const [stored, iso] of [
        ['10000-01-01 00:00:00+00', '+010000-01-01T00:00:00.000Z'],
        ['0044-03-15 12:00:00+00 BC', '-000043-03-15T12:00:00.000Z'],
        ['0005-06-07 08:09:10.123+00', '0005-06-07T08:09:10.123Z'],
      ] as const) {
        await admin().query(
          `UPDATE ${s}.sessions SET archived_at = $2::timestamptz WHERE id = $1`,
          ['d', stored],
        );
        // The kit's stored-header rule (dates within years 1–9999) makes load `corrupt`.
        if (iso.startsWith('0005')) {
          expect((await store.load('d')).archivedAt!.toISOString()).toBe(iso);
        } else expect(await codeOf(store.load('d'))).toBe('corrupt');
        const listed = await store.list({ includeArchived: true });
        expect(listed[0]!.archivedAt!.toISOString()).toBe(iso);
      }
      // Dates core rejects never reach the database.
      expect(await codeOf(store.create({ id: 'x', createdAt: new Date('+010000-01-01') }))).toBe(
        'invalid_argument',
      );
    }));
});
