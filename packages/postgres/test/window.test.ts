// Windowed history reads: edges, snapshot (never torn), cost by key range.
import { isSessionKitError, type Message } from '@sessionkit/core';
import { errorsFor, normalizeMessageWindow } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { windowStatement } from '../src/message-window.js';
import { admin, destroyStore, freshStore, peerOf, postgresForFile } from './harness.js';

const available = postgresForFile('the PostgreSQL window tests did not run');

const msg = (i: number): Message => ({ role: 'user', content: `m${i}` });
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => msg(a + i));

async function withStore(fn: (store: PostgresStore) => Promise<void>): Promise<void> {
  const store = await freshStore();
  try {
    await fn(store);
  } finally {
    await destroyStore(store);
  }
}

describe.runIf(available)('postgres › loadMessages windows', () => {
  it('edges: last, offset/limit, past the end, empty history, after replace', () =>
    withStore(async (store) => {
      await store.create({ id: 'w', messages: range(0, 10) });
      expect(await store.loadMessages('w', { last: 3 })).toEqual(range(7, 10));
      expect(await store.loadMessages('w', { last: 0 })).toEqual([]);
      expect(await store.loadMessages('w', { last: 99 })).toEqual(range(0, 10));
      expect(await store.loadMessages('w', { offset: 2, limit: 3 })).toEqual(range(2, 5));
      expect(await store.loadMessages('w', { offset: 8 })).toEqual(range(8, 10));
      expect(await store.loadMessages('w', { limit: 2 })).toEqual(range(0, 2));
      expect(await store.loadMessages('w', { offset: 10, limit: 5 })).toEqual([]);
      expect(await store.loadMessages('w', { offset: Number.MAX_SAFE_INTEGER })).toEqual([]);
      expect(await store.loadMessages('w', { limit: Number.MAX_SAFE_INTEGER })).toEqual(
        range(0, 10),
      );
      expect(await store.loadMessages('w', {})).toEqual(range(0, 10));
      const w = await store.loadMessageWindow('w', { last: 4 });
      expect(w).toEqual({ messages: range(6, 10), offset: 6, messageCount: 10, revision: 1 });
      expect(await store.loadMessageWindow('w', { offset: 12, limit: 1 })).toEqual({
        messages: [],
        offset: 10,
        messageCount: 10,
        revision: 1,
      });
      await store.commit('w', { replace: range(100, 103) });
      expect(await store.loadMessageWindow('w')).toEqual({
        messages: range(100, 103),
        offset: 0,
        messageCount: 3,
        revision: 2,
      });
      await store.create({ id: 'e', messages: [] });
      expect(await store.loadMessageWindow('e', { last: 5 })).toEqual({
        messages: [],
        offset: 0,
        messageCount: 0,
        revision: 1,
      });
      for (const bad of [{ last: -1 }, { last: 1.5 }, { last: 1, offset: 0 }, { first: 1 }]) {
        const e = await store.loadMessages('w', bad as never).catch((x: unknown) => x);
        expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
      }
      const missing = await store.loadMessageWindow('nope', { last: 1 }).catch((x: unknown) => x);
      expect(isSessionKitError(missing, 'not_found')).toBe(true);
    }));

  it('a window is never torn by concurrent commits and replaces', () =>
    withStore(async (store) => {
      const peer = await peerOf(store);
      await store.create({
        id: 't',
        messages: Array.from({ length: 4 }, (_, k) => ({ role: 'user', content: `start:${k}` })),
      });
      let stop = false;
      const writer = (async () => {
        for (let i = 0; !stop; i++) {
          // Each history is 4 messages of one generation: g0..g3 of generation i.
          const gen = Array.from({ length: 4 }, (_, k) => ({ role: 'user', content: `${i}:${k}` }));
          await peer.commit('t', i % 2 ? { replace: gen } : { replace: gen.slice(0, 2) });
          if (i % 2 === 0) await peer.commit('t', { append: gen.slice(2) });
        }
      })();
      try {
        for (let i = 0; i < 200; i++) {
          const w = await store.loadMessageWindow('t', { last: 3 });
          const gens = new Set(
            w.messages.map((m) => String((m as { content: string }).content).split(':')[0]),
          );
          expect(gens.size).toBe(1);
          expect(w.offset + w.messages.length).toBe(w.messageCount);
        }
      } finally {
        stop = true;
        await writer;
      }
    }));

  it('reads only the window: an index range scan returning the window rows, never the history', () =>
    withStore(async (store) => {
      await store.create({ id: 'big', messages: range(0, 2000) });
      const s = `"${store.schema}"`;
      const stmt = windowStatement(
        s,
        'x',
        'big',
        normalizeMessageWindow(errorsFor('t'), { last: 50 }),
      );
      const text = stmt.text.replace(/\$(\d)/g, (_, n: string) => {
        const v = (stmt.values as unknown[])[Number(n) - 1];
        return v === null ? 'NULL' : typeof v === 'string' ? `'${v}'` : String(v);
      });
      const r = await admin().query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`);
      const nodes: Record<string, unknown>[] = [];
      const visit = (n: Record<string, unknown>) => {
        nodes.push(n);
        for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) visit(c);
      };
      visit(r.rows[0]['QUERY PLAN'][0].Plan);
      const onMessages = nodes.filter((n) => n['Relation Name'] === 'messages');
      expect(onMessages.length).toBe(1);
      expect(onMessages[0]!['Node Type']).toMatch(/Index/);
      expect(onMessages[0]!['Actual Rows']).toBe(50);
      expect(String(onMessages[0]!['Index Cond'])).toMatch(/seq >=/);
      const before = store.stats.messageBodyReads;
      await store.loadMessages('big', { last: 50 });
      expect(store.stats.messageBodyReads).toBe(before + 1);
    }));
});
