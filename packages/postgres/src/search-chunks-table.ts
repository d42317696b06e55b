// The storage of `search_chunks` follows the schema's search scope (schema version 11): under
// `messages` it is the table of version 6; under `titles` or `none`, where no message text
// is ever stored, it is a partitioned table without partitions, which has no file at all
// (an empty table still holds its primary key's and its TOAST index's pages). Every
// statement that reads, deletes or copies chunks runs unchanged on either form: they find
// no rows.
import type { PoolClient } from 'pg';
import type { SearchScope } from './search-scope.js';

/** The columns and key of `search_chunks`, as version 6 made them. */
const COLUMNS = `session_id text COLLATE "C" NOT NULL,
  epoch bigint NOT NULL,
  first_seq integer NOT NULL,
  end_seq integer NOT NULL,
  text text NOT NULL,
  PRIMARY KEY (session_id, epoch, first_seq)`;

/**
 * SQL replacing `search_chunks` of schema `s` (quoted) by version 6's table (lz4 where the
 * server has it: it compresses a chunk several times faster than pglz).
 */
export function storedChunksSql(s: string): string {
  return `DROP TABLE IF EXISTS ${s}.search_chunks;
CREATE TABLE ${s}.search_chunks (${COLUMNS});
DO $do$ BEGIN
  EXECUTE 'ALTER TABLE ${s.replaceAll("'", "''")}.search_chunks ALTER COLUMN text SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN NULL;
END $do$;`;
}

/**
 * SQL replacing `search_chunks` of schema `s` (quoted) by a partitioned table without
 * partitions: no storage, every read finds nothing, and a row inserted fails (SQLSTATE
 * 23514), which no writer of a `titles` or `none` scope does (they plan no chunks).
 */
export function noChunksSql(s: string): string {
  return `DROP TABLE IF EXISTS ${s}.search_chunks;
CREATE TABLE ${s}.search_chunks (${COLUMNS}) PARTITION BY LIST (session_id);`;
}

/** Whether schema `s` (quoted) keeps chunk rows, i.e. `search_chunks` is a plain table. */
async function storesChunks(client: PoolClient, s: string): Promise<boolean> {
  const r = await client.query<{ kind: string }>(
    `SELECT relkind AS kind FROM pg_class WHERE oid = to_regclass($1)`,
    [`${s}.search_chunks`],
  );
  return r.rows[0]?.kind === 'r';
}

/**
 * Inside the caller's transaction (holding the schema's migration lock): gives
 * `search_chunks` the form `scope` needs, dropping the other one (whose rows, if any, that
 * scope never searches; a scope change rebuilds every session's search data after this).
 * Takes the table's exclusive lock when it changes it: search and indexing in other
 * processes wait for the caller's commit.
 */
export async function shapeChunksFor(
  client: PoolClient,
  s: string,
  scope: SearchScope,
): Promise<void> {
  const want = scope === 'messages';
  if ((await storesChunks(client, s)) === want) return;
  await client.query(want ? storedChunksSql(s) : noChunksSql(s));
}
