// search-indexer.ts and search-scope.ts: writes leave their search text pending, the
// indexer writes it as chunks and block words (by itself shortly after, or on demand)
// without ever making a text unsearchable or stale, never waiting on a turn and never
// making one wait; the scope option decides what is stored and what a query means.
import { isSessionKitError } from '@sessionkit/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PostgresStore, storeAdapter } from '../src/index.js';
import { POSTGRES_URL } from './env.js';
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

/** Rows of `table` in `s` for session `id`. */
const rowsOf = (s: string, table: string, id: string) =>
  count(`SELECT count(*) AS n FROM ${s}.${table} WHERE session_id = '${id}'`);

/** A pool whose statements give up after 3 s of waiting for a lock (55P03 → unavailable). */
function impatientPool(): pg.Pool {
  const pool = new pg.Pool({
    connectionString: POSTGRES_URL,
    max: 4,
    options: '-c lock_timeout=3000',
  });
  pool.on('error', () => {});
  return pool;
}

describe.runIf(available)('search-indexer › pending rows', () => {
  it('a turn’s text is pending and found at once; the store indexes it by itself', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const s = `"${schema}"`;
    try {
      await store.create({ id: 'a', title: 'Alpha' });
      await store.commit('a', { append: [{ role: 'user', content: 'Pending Pelican' }] });
      expect(await ids(store, 'pending pelican')).toEqual(['a']);
      // Indexed about 0.5 s later; wait up to 5 s on a busy machine.
      const until = Date.now() + 5000;
      while (Date.now() < until) {
        if ((await count(`SELECT count(*) AS n FROM ${s}.search_pending`)) === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_pending`)).toBe(0);
      expect(await rowsOf(s, 'search_chunks', 'a')).toBe(1);
      const words = await admin().query(
        `SELECT block, words FROM ${s}.search_words WHERE session_id = 'a' ORDER BY block`,
      );
      expect(words.rows).toEqual([
        { block: -1, words: ' alpha ' },
        { block: 0, words: ' pending pelican ' },
      ]);
      expect(await ids(store, 'pending pelican')).toEqual(['a']);
      expect(await ids(store, 'pelic')).toEqual(['a']);
      expect(await ids(store, 'alph')).toEqual(['a']);
      expect(store.stats.searchRowsIndexed).toBeGreaterThanOrEqual(2);
    } finally {
      await dispose();
    }
  });

  it('a block keeps each word once: a turn adds only the words its block did not have', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const s = `"${schema}"`;
    const wordsOf = async () =>
      (
        await admin().query(
          `SELECT words FROM ${s}.search_words WHERE session_id = 'w' AND block = 0`,
        )
      ).rows
        .flatMap((r: { words: string }) => r.words.trim().split(' '))
        .sort();
    try {
      await store.create({ id: 'w', messages: [] });
      await store.commit('w', { append: [{ role: 'user', content: 'red green blue' }] });
      await store.indexPendingSearch();
      await store.commit('w', { append: [{ role: 'user', content: 'green, blue; red!' }] });
      await store.commit('w', { append: [{ role: 'user', content: 'Blue violet' }] });
      await store.indexPendingSearch();
      expect(await wordsOf()).toEqual(['blue', 'green', 'red', 'violet']);
      // A store that did not write the block reads its words once and adds none twice.
      const peerPool = newPool(2);
      const peer = await PostgresStore.fromPool(peerPool, { schema });
      try {
        await peer.commit('w', { append: [{ role: 'user', content: 'violet red indigo' }] });
        await peer.indexPendingSearch();
      } finally {
        await peer.close();
        await peerPool.end();
      }
      expect(await wordsOf()).toEqual(['blue', 'green', 'indigo', 'red', 'violet']);
      expect(await ids(store, 'indigo')).toEqual(['w']);
      expect(await ids(store, 'red green')).toEqual(['w']);
      expect(await ids(store, 'blue indigo')).toEqual([]);
      expect((await store.repair()).indexEntriesFixed).toBe(0);
    } finally {
      await dispose();
    }
  });

  it('indexing racing replaces, appends and deletes never leaves a stale or missing match', async () => {
    const { schema, store, dispose } = await borrowedStore();
    try {
      await store.create({ id: 'r', messages: [] });
      await store.create({ id: 'gone', messages: [] });
      let stop = false;
      const indexer = (async () => {
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
      expect(await indexer).toBeGreaterThan(0);
      await store.indexPendingSearch();
      // Since the last replace (i = 39), nothing: the history is that one message.
      expect(await ids(store, 'replaced39')).toEqual(['r']);
      expect(await ids(store, 'replaced35')).toEqual([]);
      expect(await ids(store, 'appended38')).toEqual([]);
      expect(await ids(store, 'gone1')).toEqual([]);
      expect((await store.repair()).indexEntriesFixed).toBe(0);
      // What a race left behind is gone after repair.
      const s = `"${schema}"`;
      for (const table of ['search_chunks', 'search_words', 'search_pending']) {
        expect(await rowsOf(s, table, 'gone')).toBe(0);
      }
      expect(
        await count(
          `SELECT count(*) AS n FROM ${s}.search_chunks k JOIN ${s}.sessions x ON x.id = k.session_id WHERE k.epoch <> x.search_epoch`,
        ),
      ).toBe(0);
    } finally {
      await dispose();
    }
  });

  it('never waits on a turn, and no write waits on it', async () => {
    const { schema, dispose } = await borrowedStore();
    const s = `"${schema}"`;
    const pool = impatientPool();
    const held = await admin().connect();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      await store.create({ id: 't', title: 'Turns', messages: [] });
      await store.commit('t', { append: [{ role: 'user', content: 'first words' }] });
      // A turn in flight holds the session row: the indexer still indexes it.
      await held.query('BEGIN');
      await held.query(`SELECT 1 FROM ${s}.sessions WHERE id = 't' FOR UPDATE`);
      expect(await store.indexPendingSearch()).toBe(2);
      await held.query('ROLLBACK');
      // An indexer in flight holds pending rows: turns, replaces, title patches and
      // deletes of the session go on (a wait would fail after 3 s with unavailable).
      await store.commit('t', { append: [{ role: 'user', content: 'second words' }] });
      await held.query('BEGIN');
      await held.query(`SELECT 1 FROM ${s}.search_pending FOR UPDATE`);
      await store.commit('t', { append: [{ role: 'user', content: 'third words' }] });
      await store.commit('t', { replace: [{ role: 'user', content: 'fourth words' }] });
      await store.commit('t', { patch: { title: 'Renamed' } });
      expect(await ids(store, 'second')).toEqual([]);
      expect(await ids(store, 'fourth words')).toEqual(['t']);
      expect(await ids(store, 'renamed')).toEqual(['t']);
      await store.create({ id: 'x', messages: [{ role: 'user', content: 'doomed' }] });
      await held.query('COMMIT');
      await held.query('BEGIN');
      await held.query(`SELECT 1 FROM ${s}.search_pending FOR UPDATE`);
      await store.delete('x');
      await held.query('COMMIT');
      expect(await ids(store, 'doomed')).toEqual([]);
      await store.indexPendingSearch();
      expect(await ids(store, 'fourth words')).toEqual(['t']);
      expect(await ids(store, 'third')).toEqual([]);
      expect((await store.repair()).indexEntriesFixed).toBe(0);
      await store.close();
    } finally {
      await held.query('ROLLBACK').catch(() => {});
      held.release();
      await pool.end();
      await dispose();
    }
  });
});

describe.runIf(available)('search-indexer › rows left by a process that exited', () => {
  it('a store opened on a schema with pending rows indexes them', async () => {
    const { schema, pool, store, dispose } = await borrowedStore();
    const s = `"${schema}"`;
    try {
      await store.create({ id: 'left', messages: [] });
      await store.close();
      // What a process that committed and exited before its indexer ran leaves behind.
      await admin().query(
        `INSERT INTO ${s}.search_pending (session_id, seq, next_seq, epoch, text)
         SELECT 'left', 0, 1, search_epoch, 'Aorphaned words' FROM ${s}.sessions WHERE id = 'left'`,
      );
      const next = await PostgresStore.fromPool(pool, { schema });
      expect(await ids(next, 'orphaned words')).toEqual(['left']);
      const until = Date.now() + 5000;
      while (Date.now() < until) {
        if ((await count(`SELECT count(*) AS n FROM ${s}.search_pending`)) === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await rowsOf(s, 'search_chunks', 'left')).toBe(1);
      expect(await ids(next, 'orphaned words')).toEqual(['left']);
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
    const searchRows = (where = 'true') =>
      count(`SELECT (SELECT count(*) FROM ${s}.search_chunks WHERE ${where.replace('X', 'first_seq')})
        + (SELECT count(*) FROM ${s}.search_words WHERE ${where.replace('X', 'block')})
        + (SELECT count(*) FROM ${s}.search_pending WHERE ${where.replace('X', 'seq')}) AS n`);
    try {
      const none = await PostgresStore.fromPool(pool, { schema, search: 'none' });
      await none.create({ id: 'n', title: 'Titled', messages: [{ role: 'user', content: 'hi' }] });
      await none.commit('n', {
        append: [{ role: 'user', content: 'more text' }],
        patch: { title: 'Renamed' },
      });
      await none.clone('n');
      await none.indexPendingSearch();
      expect(await searchRows()).toBe(0);
      expect(await count(`SELECT count(*) AS n FROM ${s}.sessions WHERE title_search <> ''`)).toBe(
        0,
      );
      const e = await none.list({ query: 'renamed' }).catch((x: unknown) => x);
      expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
      expect((await none.list({})).length).toBe(2);
      expect((await none.repair()).indexEntriesFixed).toBe(0);
      await none.close();

      const titles = await PostgresStore.fromPool(pool, { schema, search: 'titles' });
      expect(titles.searchScope).toBe('titles');
      expect(await searchRows('X >= 0')).toBe(0);
      expect(await ids(titles, 'renamed')).toHaveLength(2);
      expect(await ids(titles, 'more text')).toEqual([]);
      await titles.commit('n', { append: [{ role: 'user', content: 'later words' }] });
      expect(await ids(titles, 'later words')).toEqual([]);
      await titles.indexPendingSearch();
      expect(await searchRows('X >= 0')).toBe(0);
      expect((await titles.repair()).indexEntriesFixed).toBe(0);
      await titles.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
