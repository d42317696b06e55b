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

/**
 * On schema `s` (quoted) at version 7 or later: the trigram index as the release's
 * `trigram.ts` created it after the migrations, and session "old" titled `title` holding
 * `messages` (revision 1). Returns the session's search epoch (text).
 */
export async function oldSessionWithWordsIndex(
  c: pg.PoolClient,
  s: string,
  title: string,
  messages: unknown[],
): Promise<string> {
  await c.query(
    `CREATE INDEX search_words_trgm ON ${s}.search_words USING gin (words public.gin_trgm_ops)
     WITH (gin_pending_list_limit = 64)`,
  );
  const epoch = (
    await c.query(
      `INSERT INTO ${s}.sessions (id, title, title_search, created_at, updated_at, message_count, revision)
       VALUES ('old', $1, lower($1), now(), now(), $2, 1) RETURNING search_epoch::text AS e`,
      [title, messages.length],
    )
  ).rows[0].e as string;
  await c.query(
    `INSERT INTO ${s}.messages (session_id, seq, body)
     SELECT 'old', o::integer - 1, b FROM unnest($1::text[]) WITH ORDINALITY AS u(b, o)`,
    [messages.map((m) => JSON.stringify(m))],
  );
  return epoch;
}
