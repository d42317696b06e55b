// Schema version 5 applied to a schema created and written by version 4: rows stay where
// they are, indexed; version 5's turn function writes new rows to search_pending. Today's
// store then migrates on (version 6) and finds both.
import { searchTextOf } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { LATEST_VERSION } from '../src/migrations/index.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';
import { applyMigrations, schemaAtVersion } from './old-schema.js';
import { V5_APPEND, v5AppendValues } from './v5-writes.js';

const available = postgresForFile('the PostgreSQL migration 5 test did not run');

const turn = (i: number) => [
  { role: 'user', content: `Question ${i} about the Walrus` },
  { role: 'assistant', content: `Answer ${i} about the Narwhal` },
];

const count = async (sql: string) => Number((await admin().query(sql)).rows[0].n);

describe.runIf(available)('postgres › migration 5', () => {
  it('a version 4 schema upgrades in place: rows stay indexed, turns go pending', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    const c = await admin().connect();
    try {
      await schemaAtVersion(c, s, 4);
      await c.query(
        `CREATE INDEX search_rows_trgm ON ${s}.search_rows USING gin (text public.gin_trgm_ops)`,
      );
      await c.query(
        `INSERT INTO ${s}.sessions (id, title, created_at, updated_at) VALUES ('old', 'Old Title', now(), now())`,
      );
      await c.query(
        `INSERT INTO ${s}.search_rows (session_id, seq, text) VALUES ('old', -1, 'old title')`,
      );
      // A turn through version 4's sk_append (the signature version 5 kept).
      const first = await c.query(V5_APPEND(s), v5AppendValues('old', 1, turn(0)));
      expect(first.rows[0].code).toBe('ok');
      await applyMigrations(c, s, 5, 5);
      // Rows written by version 4 stay in the indexed table, in the version 4 format.
      const old = await c.query(
        `SELECT seq, text FROM ONLY ${s}.search_rows WHERE session_id = 'old' ORDER BY seq`,
      );
      expect(old.rows).toEqual([
        { seq: -1, text: 'old title' },
        { seq: 0, text: searchTextOf(turn(0)) },
      ]);
      const index = await c.query(
        `SELECT reloptions FROM pg_class WHERE oid = '${s}.search_rows_trgm'::regclass`,
      );
      expect(index.rows[0].reloptions).toEqual(['gin_pending_list_limit=64']);
      expect((await c.query(`SELECT value FROM ${s}.settings`)).rows).toEqual([
        { value: 'messages' },
      ]);
      // Version 5's turn: the search row goes pending.
      const second = await c.query(V5_APPEND(s), v5AppendValues('old', 2, turn(1)));
      expect(second.rows[0].code).toBe('ok');
      expect((await c.query(`SELECT seq, text FROM ${s}.search_pending`)).rows).toEqual([
        { seq: 2, text: searchTextOf(turn(1)) },
      ]);
    } finally {
      c.release();
    }
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      expect(await count(`SELECT max(version) AS n FROM ${s}.schema_migrations`)).toBe(
        LATEST_VERSION,
      );
      expect((await store.list({ query: 'answer 0 about' })).map((x) => x.id)).toEqual(['old']);
      expect((await store.list({ query: 'question 1 about' })).map((x) => x.id)).toEqual(['old']);
      expect((await store.list({ query: 'old title' })).map((x) => x.id)).toEqual(['old']);
      expect(await store.list({ query: 'walrusanswer' })).toEqual([]);
      expect((await store.repair()).indexEntriesFixed).toBe(0);
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
