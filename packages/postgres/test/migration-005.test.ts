// Schema version 5 applied to a schema created and written by version 4 (today's released
// layout, written through today's statements): rows stay where they are, new turns go to
// search_pending, the indexer moves them, a search-scope change rebuilds the search rows
// in batches with progress, and repair() agrees with every state.
import { searchTextOf } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { type MigrationProgress, PostgresStore } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations/index.js';
import { searchChunks } from '../src/search-rows.js';
import { APPEND_PARAMS, callValues, namedCall } from '../src/statements/commit.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';

const available = postgresForFile('the PostgreSQL migration 5 test did not run');

const turn = (i: number) => [
  { role: 'user', content: `Question ${i} about the Walrus` },
  { role: 'assistant', content: `Answer ${i} about the Narwhal` },
];

/** A version 4 schema as today's open creates it, with 250 sessions and two turns in "old". */
async function version4Schema(s: string): Promise<void> {
  const c = await admin().connect();
  try {
    await c.query(`CREATE SCHEMA ${s}`);
    await c.query(
      `CREATE TABLE ${s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const m of MIGRATIONS.filter((x) => x.version <= 4)) {
      await c.query(m.sql(s));
      if (m.run) await m.run(c, s);
      await c.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
        m.version,
        m.name,
      ]);
    }
    await c.query(
      `CREATE INDEX search_rows_trgm ON ${s}.search_rows USING gin (text public.gin_trgm_ops)`,
    );
    await c.query(
      `INSERT INTO ${s}.sessions (id, title, created_at, updated_at)
       SELECT 'bulk-' || lpad(g::text, 4, '0'), 'Bulk ' || g, now(), now() FROM generate_series(1, 249) AS g`,
    );
    await c.query(
      `INSERT INTO ${s}.search_rows (session_id, seq, text) SELECT id, -1, lower(title) FROM ${s}.sessions`,
    );
    await c.query(
      `INSERT INTO ${s}.sessions (id, title, created_at, updated_at) VALUES ('old', 'Old Title', now(), now())`,
    );
    await c.query(
      `INSERT INTO ${s}.search_rows (session_id, seq, text) VALUES ('old', -1, 'old title')`,
    );
    // Two turns through version 4's sk_append, called as today's store calls it.
    const append = namedCall(s, 'sk_append', APPEND_PARAMS);
    for (let i = 0; i < 2; i++) {
      const messages = turn(i);
      const r = await c.query(
        append,
        callValues(APPEND_PARAMS, {
          id: 'old',
          expectedRevision: i + 1,
          now: new Date(),
          bodies: messages.map((m) => JSON.stringify(m)),
          search: searchChunks(messages),
        }),
      );
      expect(r.rows[0].code).toBe('ok');
    }
  } finally {
    c.release();
  }
}

const count = async (sql: string) => Number((await admin().query(sql)).rows[0].n);

describe.runIf(available)('postgres › migration 5', () => {
  it('a version 4 schema upgrades in place: rows stay indexed, turns go pending, scope changes rebuild in batches', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    await version4Schema(s);
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      expect(await count(`SELECT max(version) AS n FROM ${s}.schema_migrations`)).toBe(5);
      expect(store.searchScope).toBe('messages');
      // Rows written by version 4 stay in the indexed table, in the version 4 format.
      const old = await admin().query(
        `SELECT seq, text FROM ONLY ${s}.search_rows WHERE session_id = 'old' ORDER BY seq`,
      );
      expect(old.rows).toEqual([
        { seq: -1, text: 'old title' },
        { seq: 0, text: searchTextOf(turn(0)) },
        { seq: 2, text: searchTextOf(turn(1)) },
      ]);
      expect((await store.list({ query: 'answer 1 about' })).map((x) => x.id)).toEqual(['old']);
      expect(await store.list({ query: 'walrusanswer' })).toEqual([]);
      // A new turn's search row goes pending (no trigram index) and is found at once. The
      // store's own pass may already have moved it (it runs ~100 ms after the write, and a
      // loaded machine can take that long between two statements), so the row is counted
      // in either table, then moved by an explicit pass if it was still pending.
      await store.commit('old', { append: turn(2) });
      const inEither = `SELECT (SELECT count(*) FROM ${s}.search_pending WHERE session_id = 'old')
        + (SELECT count(*) FROM ONLY ${s}.search_rows WHERE session_id = 'old' AND seq = 4) AS n`;
      expect(await count(inEither)).toBe(1);
      expect((await store.list({ query: 'question 2 about' })).map((x) => x.id)).toEqual(['old']);
      expect([0, 1]).toContain(await store.indexPendingSearch());
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_pending`)).toBe(0);
      expect(
        await count(
          `SELECT count(*) AS n FROM ONLY ${s}.search_rows WHERE session_id = 'old' AND seq = 4`,
        ),
      ).toBe(1);
      expect((await store.list({ query: 'question 2 about' })).map((x) => x.id)).toEqual(['old']);
      expect(await store.repair()).toMatchObject({ rebuilt: 250, indexEntriesFixed: 0 });
      await store.close();

      // Titles only: every session rebuilt in batches of 200, reporting progress.
      const progress: MigrationProgress[] = [];
      const titles = await PostgresStore.fromPool(pool, {
        schema,
        search: 'titles',
        onMigrationProgress: (p) => progress.push(p),
      });
      expect(progress.map((p) => [p.done, p.total])).toEqual([
        [200, 250],
        [250, 250],
      ]);
      expect(progress[0]?.task).toBe('search scope messages → titles');
      expect(titles.searchScope).toBe('titles');
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_rows WHERE seq >= 0`)).toBe(0);
      expect(await titles.list({ query: 'walrus' })).toEqual([]);
      expect((await titles.list({ query: 'OLD TITLE' })).map((x) => x.id)).toEqual(['old']);
      await titles.commit('old', { append: turn(3) });
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_rows WHERE seq >= 0`)).toBe(0);
      expect((await titles.repair()).indexEntriesFixed).toBe(0);
      await titles.close();

      // Back to messages: the rows are computed again from the stored messages.
      const again = await PostgresStore.fromPool(pool, { schema, search: 'messages' });
      expect((await again.list({ query: 'narwhal' })).map((x) => x.id)).toEqual(['old']);
      expect((await again.list({ query: 'question 3 about' })).map((x) => x.id)).toEqual(['old']);
      expect((await again.repair()).indexEntriesFixed).toBe(0);
      // A store opened without the option keeps the recorded scope.
      const plain = await PostgresStore.fromPool(pool, { schema });
      expect(plain.searchScope).toBe('messages');
      await plain.close();
      await again.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
