// search-indexer.ts and search-scope.ts: turns leave their search rows pending, the
// indexer moves them (by itself shortly after, or on demand) without ever making a row
// unsearchable or stale; the scope option decides what is stored and what a query means.
import { isSessionKitError } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { PostgresStore, storeAdapter } from '../src/index.js';
import {
  admin,
  borrowedStore,
  dropSchema,
  freshSchema,
  newPool,
  postgresForFile,
} from './harness.js';

const available = postgresForFile('the search indexer tests did not run');

const count = async (sql: string) => Number((await admin().query(sql)).rows[0].n);
const ids = async (store: PostgresStore, query: string) =>
  (await store.list({ query, includeArchived: true })).map((x) => x.id).sort();

describe.runIf(available)('search-indexer › pending rows', () => {
  it('a turn’s rows are pending and found at once; the store moves them into the index by itself', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const s = `"${schema}"`;
    try {
      await store.create({ id: 'a', title: 'Alpha' });
      await store.commit('a', { append: [{ role: 'user', content: 'Pending Pelican' }] });
      expect(await ids(store, 'pending pelican')).toEqual(['a']);
      // Moved about 100 ms later; wait up to 5 s on a busy machine.
      const until = Date.now() + 5000;
      while (Date.now() < until) {
        if ((await count(`SELECT count(*) AS n FROM ${s}.search_pending`)) === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_pending`)).toBe(0);
      expect(
        await count(`SELECT count(*) AS n FROM ONLY ${s}.search_rows WHERE session_id = 'a'`),
      ).toBe(2);
      expect(await ids(store, 'pending pelican')).toEqual(['a']);
      expect(store.stats.searchRowsIndexed).toBeGreaterThanOrEqual(1);
    } finally {
      await dispose();
    }
  });

  it('moves racing replaces, appends and deletes never leave a stale or missing row', async () => {
    const { schema, store, dispose } = await borrowedStore();
    try {
      await store.create({ id: 'r', messages: [] });
      await store.create({ id: 'gone', messages: [] });
      let stop = false;
      const mover = (async () => {
        let passes = 0;
        while (!stop) {
          await store.indexPendingSearch();
          passes++;
        }
        return passes;
      })();
      for (let i = 0; i < 40; i++) {
        if (i % 4 === 3) {
          await store.commit('r', { replace: [{ role: 'user', content: `replaced${i} text` }] });
        } else {
          await store.commit('r', { append: [{ role: 'user', content: `appended${i} text` }] });
        }
        await store.commit('gone', { append: [{ role: 'user', content: `gone${i}` }] });
      }
      await store.delete('gone');
      stop = true;
      expect(await mover).toBeGreaterThan(0);
      await store.indexPendingSearch();
      // Since the last replace (i = 39), nothing: the history is that one message.
      expect(await ids(store, 'replaced39')).toEqual(['r']);
      expect(await ids(store, 'replaced35')).toEqual([]);
      expect(await ids(store, 'appended38')).toEqual([]);
      expect(await ids(store, 'gone1')).toEqual([]);
      expect(
        await count(`SELECT count(*) AS n FROM "${schema}".search_rows WHERE session_id = 'gone'`),
      ).toBe(0);
      expect((await store.repair()).indexEntriesFixed).toBe(0);
    } finally {
      await dispose();
    }
  });
});

describe.runIf(available)('search-indexer › rows left by a process that exited', () => {
  it('a store opened on a schema with pending rows moves them', async () => {
    const { schema, pool, store, dispose } = await borrowedStore();
    const s = `"${schema}"`;
    try {
      await store.create({ id: 'left', messages: [] });
      await store.close();
      // What a process that committed and exited before its indexer ran leaves behind.
      await admin().query(
        `INSERT INTO ${s}.search_pending (session_id, seq, text) VALUES ('left', 0, 'Aorphaned words')`,
      );
      const next = await PostgresStore.fromPool(pool, { schema });
      expect(await ids(next, 'orphaned words')).toEqual(['left']);
      const until = Date.now() + 5000;
      while (Date.now() < until) {
        if ((await count(`SELECT count(*) AS n FROM ${s}.search_pending`)) === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await count(`SELECT count(*) AS n FROM ONLY ${s}.search_rows WHERE seq = 0`)).toBe(1);
      await next.close();
    } finally {
      await dispose();
    }
  });
});

describe.runIf(available)('search-scope › the search option', () => {
  it('rejects an unknown scope before any I/O, as an option or a URL parameter', async () => {
    const pool = newPool(1);
    try {
      expect(() => new PostgresStore({ pool, search: 'all' as never })).toThrow(/search must be/);
    } finally {
      await pool.end();
    }
    // Port 1: nothing listens there, so only a check before connecting can give this error.
    const e = await storeAdapter
      .open(new URL('postgres://127.0.0.1:1/db?search=all'))
      .catch((x: unknown) => x);
    expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
    expect(String((e as Error).message)).toMatch(/search must be/);
  });

  it('"none" stores no search text and refuses a query; "titles" searches titles only', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    const pool = newPool();
    try {
      const none = await PostgresStore.fromPool(pool, { schema, search: 'none' });
      await none.create({ id: 'n', title: 'Titled', messages: [{ role: 'user', content: 'hi' }] });
      await none.commit('n', {
        append: [{ role: 'user', content: 'more text' }],
        patch: { title: 'Renamed' },
      });
      await none.clone('n');
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_rows`)).toBe(0);
      const e = await none.list({ query: 'renamed' }).catch((x: unknown) => x);
      expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
      expect((await none.list({})).length).toBe(2);
      expect((await none.repair()).indexEntriesFixed).toBe(0);
      await none.close();

      const titles = await PostgresStore.fromPool(pool, { schema, search: 'titles' });
      expect(titles.searchScope).toBe('titles');
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_rows WHERE seq >= 0`)).toBe(0);
      expect(await ids(titles, 'renamed')).toHaveLength(2);
      expect(await ids(titles, 'more text')).toEqual([]);
      await titles.commit('n', { append: [{ role: 'user', content: 'later words' }] });
      expect(await ids(titles, 'later words')).toEqual([]);
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_rows WHERE seq >= 0`)).toBe(0);
      expect((await titles.repair()).indexEntriesFixed).toBe(0);
      await titles.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
