// Schemas as an earlier release left them, for the migration tests: the migrations up to a
// version applied in order (with their JavaScript steps) and recorded, nothing after.
import type pg from 'pg';
import { MIGRATIONS } from '../src/migrations/index.js';

/** Creates schema `s` (quoted) on `c` at version `version`. */
export async function schemaAtVersion(c: pg.PoolClient, s: string, version: number): Promise<void> {
  await c.query(`CREATE SCHEMA ${s}`);
  await c.query(
    `CREATE TABLE ${s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  await applyMigrations(c, s, 1, version);
}

/** Applies migrations `from` … `to` to schema `s` (quoted) and records them. */
export async function applyMigrations(
  c: pg.PoolClient,
  s: string,
  from: number,
  to: number,
): Promise<void> {
  for (const m of MIGRATIONS.filter((x) => x.version >= from && x.version <= to)) {
    await c.query(m.sql(s));
    if (m.run) await m.run(c, s);
    await c.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
      m.version,
      m.name,
    ]);
  }
}
