// Schema version 7 applied to a schema created and written by version 6: the root count
// starts at the number of roots already stored, and retention keeps the newest.
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';
import { schemaAtVersion } from './old-schema.js';

const available = postgresForFile('the PostgreSQL migration 7 test did not run');

describe.runIf(available)('postgres › migration 7', () => {
  it('counts the roots a version 6 schema holds; enforceMax then deletes the oldest', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    const c = await admin().connect();
    try {
      await schemaAtVersion(c, s, 6);
      await c.query(
        `INSERT INTO ${s}.sessions (id, created_at, updated_at)
         SELECT 'root-' || lpad(g::text, 3, '0'), now(), timestamptz '2024-01-01' + g * interval '1 minute'
         FROM generate_series(1, 120) AS g`,
      );
      await c.query(
        `INSERT INTO ${s}.sessions (id, parent_id, created_at, updated_at)
         SELECT 'kid-' || g, 'root-001', now(), now() FROM generate_series(1, 5) AS g`,
      );
    } finally {
      c.release();
    }
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      const counted = await admin().query(`SELECT sum(n)::int AS n FROM ${s}.root_count`);
      expect(counted.rows[0].n).toBe(120);
      expect(await store.enforceMax(100)).toBe(20);
      const left = await admin().query(
        `SELECT min(id) AS oldest, count(*)::int AS n FROM ${s}.sessions WHERE parent_id IS NULL`,
      );
      // The 20 oldest roots went (root-001 … root-020); its children became roots.
      expect(left.rows[0]).toEqual({ oldest: 'kid-1', n: 105 });
      expect((await admin().query(`SELECT sum(n)::int AS n FROM ${s}.root_count`)).rows[0].n).toBe(
        105,
      );
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
