// Schema version 4 applied to a version 3 schema holding data: search rows in the old
// format (messages joined by a newline) are rewritten, lineage columns read as core's
// readLineage(undefined); opened by today's store (which migrates on), old sessions keep
// working.
import { searchTextOf } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';
import { applyMigrations, schemaAtVersion } from './old-schema.js';

const available = postgresForFile('the PostgreSQL migration 4 test did not run');

describe.runIf(available)('postgres › migration 4', () => {
  it('a version 3 schema with old-format search rows is upgraded: no match across messages, lineage defaults', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    const c = await admin().connect();
    const bodies = [
      JSON.stringify({ role: 'user', content: 'First needle' }),
      JSON.stringify({ role: 'assistant', content: 'haystack Second' }),
    ];
    try {
      await schemaAtVersion(c, s, 3);
      // What version 3 wrote: one row per commit, messages joined by "\n", the title at -1.
      await c.query(
        `INSERT INTO ${s}.sessions (id, title, created_at, updated_at, message_count)
         VALUES ('old', 'Old Title', now(), now(), 2), ('kid', '', now(), now(), 2)`,
      );
      await c.query(
        `UPDATE ${s}.sessions SET parent_id = 'old', branched_at_turn = 2 WHERE id = 'kid'`,
      );
      await c.query(
        `INSERT INTO ${s}.messages (session_id, seq, body) VALUES ('old', 0, $1), ('old', 1, $2), ('kid', 0, $1), ('kid', 1, $2)`,
        bodies,
      );
      await c.query(
        `INSERT INTO ${s}.search_rows (session_id, seq, text) VALUES
         ('old', 0, 'first needle' || chr(10) || 'haystack second'), ('old', -1, 'old title'),
         ('kid', 0, 'first needle' || chr(10) || 'haystack second')`,
      );
      // Before the upgrade the old row matches across the two messages.
      const v3 = await c.query(
        `SELECT count(*)::int AS n FROM ${s}.search_rows WHERE text LIKE '%needle' || chr(10) || 'haystack%'`,
      );
      expect(v3.rows[0].n).toBe(2);
      // Migration 4 itself: the rows rewritten in the version 4 format.
      await applyMigrations(c, s, 4, 4);
      const rows = await c.query(
        `SELECT session_id, seq, text FROM ${s}.search_rows ORDER BY session_id, seq`,
      );
      const messages = bodies.map((b) => JSON.parse(b) as unknown);
      expect(rows.rows).toEqual([
        { session_id: 'kid', seq: 0, text: searchTextOf(messages) },
        { session_id: 'old', seq: -1, text: 'old title' },
        { session_id: 'old', seq: 0, text: searchTextOf(messages) },
      ]);
    } finally {
      c.release();
    }
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      expect((await store.list({ query: 'needle\nhaystack' })).length).toBe(0);
      expect((await store.list({ query: 'needle' })).map((x) => x.id)).toEqual(['old', 'kid']);
      expect((await store.list({ query: 'old title' })).map((x) => x.id)).toEqual(['old']);
      const lineage = await admin().query(
        `SELECT id, history_rewrites, merge_base FROM ${s}.sessions ORDER BY id`,
      );
      expect(lineage.rows).toEqual([
        { id: 'kid', history_rewrites: '0', merge_base: null },
        { id: 'old', history_rewrites: '0', merge_base: null },
      ]);
      // A child stored before lineage merges as earlier versions did.
      await store.commit('kid', { append: [{ role: 'user', content: 'more' }] });
      expect((await store.merge('kid')).messages.length).toBe(3);
      expect((await store.repair()).indexEntriesFixed).toBe(0);
      await store.delete('old');
      expect((await store.load('kid')).parentId).toBeUndefined();
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
