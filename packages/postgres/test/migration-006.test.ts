// Schema version 6 applied to a schema created and written by version 5 (the previous
// release): its search rows — indexed and pending, titles included — become chunks, block
// words and `title_search`, the old tables go, search finds what it found before; new turns
// take the new path; a search-scope change rebuilds in batches with progress; repair()
// agrees with every state.
import { searchTextOf } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, type MigrationProgress, PostgresStore } from '../src/index.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';
import { schemaAtVersion } from './old-schema.js';
import { V5_APPEND, v5AppendValues } from './v5-writes.js';

const available = postgresForFile('the PostgreSQL migration 6 test did not run');

const turn = (i: number) => [
  { role: 'user', content: `Question ${i} about the Walrus` },
  { role: 'assistant', content: `Answer ${i} about the Narwhal` },
];

const count = async (sql: string) => Number((await admin().query(sql)).rows[0].n);

/** A version 5 schema with 249 titled sessions and "old": two turns indexed, one pending. */
async function version5Schema(s: string): Promise<void> {
  const c = await admin().connect();
  try {
    await schemaAtVersion(c, s, 5);
    await c.query(
      `CREATE INDEX search_rows_trgm ON ${s}.search_rows USING gin (text public.gin_trgm_ops)
       WITH (gin_pending_list_limit = 64)`,
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
    for (let i = 0; i < 3; i++) {
      const r = await c.query(V5_APPEND(s), v5AppendValues('old', i + 1, turn(i)));
      expect(r.rows[0].code).toBe('ok');
      // Version 5's indexer moved the first two turns; the third is still pending.
      if (i < 2) {
        await c.query(
          `WITH d AS (DELETE FROM ${s}.search_pending RETURNING session_id, seq, text)
           INSERT INTO ${s}.search_rows (session_id, seq, text) SELECT * FROM d`,
        );
      }
    }
  } finally {
    c.release();
  }
}

describe.runIf(available)('postgres › migration 6', () => {
  it('a version 5 schema is converted in place; turns, scope changes and repair work on it', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    await version5Schema(s);
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      expect(await count(`SELECT max(version) AS n FROM ${s}.schema_migrations`)).toBe(
        LATEST_VERSION,
      );
      expect(
        await count(
          `SELECT count(*) AS n FROM pg_tables WHERE schemaname = '${schema}' AND tablename LIKE '%_v5'`,
        ),
      ).toBe(0);
      // The texts of the three turns, indexed and pending alike, in one chunk of "old".
      const chunks = await admin().query(
        `SELECT first_seq, end_seq, text FROM ${s}.search_chunks WHERE session_id = 'old'`,
      );
      expect(chunks.rows).toEqual([
        { first_seq: 0, end_seq: 6, text: searchTextOf([...turn(0), ...turn(1), ...turn(2)]) },
      ]);
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_pending`)).toBe(0);
      expect(
        await count(`SELECT count(*) AS n FROM ${s}.sessions WHERE title_search = lower(title)`),
      ).toBe(250);
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_words WHERE block = -1`)).toBe(250);
      expect((await store.list({ query: 'answer 1 about' })).map((x) => x.id)).toEqual(['old']);
      expect((await store.list({ query: 'question 2 about' })).map((x) => x.id)).toEqual(['old']);
      expect((await store.list({ query: 'bulk 249' })).map((x) => x.id)).toEqual(['bulk-0249']);
      expect(await store.list({ query: 'walrusanswer' })).toEqual([]);
      // A new turn goes pending, is found at once, and is indexed by the store.
      await store.commit('old', { append: turn(3) });
      expect((await store.list({ query: 'question 3 about' })).map((x) => x.id)).toEqual(['old']);
      await store.indexPendingSearch();
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_pending`)).toBe(0);
      expect(
        await count(`SELECT count(*) AS n FROM ${s}.search_chunks WHERE session_id = 'old'`),
      ).toBe(2);
      expect((await store.list({ query: 'question 3 about' })).map((x) => x.id)).toEqual(['old']);
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
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_chunks`)).toBe(0);
      expect(await titles.list({ query: 'walrus' })).toEqual([]);
      expect((await titles.list({ query: 'OLD TITLE' })).map((x) => x.id)).toEqual(['old']);
      await titles.commit('old', { append: turn(4) });
      await titles.indexPendingSearch();
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_chunks`)).toBe(0);
      expect((await titles.repair()).indexEntriesFixed).toBe(0);
      await titles.close();

      // Back to messages: the texts are computed again from the stored messages.
      const again = await PostgresStore.fromPool(pool, { schema, search: 'messages' });
      expect(await count(`SELECT count(*) AS n FROM ${s}.search_pending`)).toBe(0);
      expect((await again.list({ query: 'narwhal' })).map((x) => x.id)).toEqual(['old']);
      expect((await again.list({ query: 'question 4 about' })).map((x) => x.id)).toEqual(['old']);
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
