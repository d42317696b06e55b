// migrations/002-…: sk_delete locks the parent; a version 1 schema is upgraded in place.
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations/index.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';

const available = postgresForFile('the migration-002 tests did not run');

describe.runIf(available)('migration 2 › upgrade in place', () => {
  it('a schema at version 1 with data is upgraded in place on open', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    const c = await admin().connect();
    try {
      await c.query(`CREATE SCHEMA ${s}`);
      await c.query(
        `CREATE TABLE ${s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      await c.query(MIGRATIONS[0]!.sql(s));
      await c.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES (1, 'initial')`);
      await c.query(
        `INSERT INTO ${s}.sessions (id, created_at, updated_at) VALUES ('old', now(), now())`,
      );
    } finally {
      c.release();
    }
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      const versions = await admin().query(
        `SELECT version FROM ${s}.schema_migrations ORDER BY version`,
      );
      expect(versions.rows.map((r: { version: number }) => r.version)).toEqual(
        MIGRATIONS.map((m) => m.version),
      );
      const def = await admin().query(`SELECT pg_get_functiondef(to_regprocedure($1)) AS d`, [
        `${s}.sk_delete_lock(text)`,
      ]);
      expect(def.rows[0].d).toContain('FOR KEY SHARE');
      expect((await store.load('old')).id).toBe('old');
      await store.create({ id: 'kid', parentId: 'old' });
      await store.delete('old');
      expect((await store.load('kid')).parentId).toBeUndefined();
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
