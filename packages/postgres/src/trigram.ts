// The optional pg_trgm GIN index over search_words.words (the words of each block, see
// search-index-plan.ts). Search works without it (a scan of search_words, never of
// messages); with it, the LIKE patterns of a query's words are served by the index.
import type { PoolClient } from 'pg';
import { isConnectionError } from './connection.js';
import { ADVISORY_LOCK_CLASS, quoteIdent } from './identifiers.js';

// Object id of the lock that serialises CREATE EXTENSION across schemas.
const EXTENSION_LOCK = 0;

/** Whether `schema` has the trigram index (`search_words_trgm`). */
export async function hasTrigramIndex(client: PoolClient, schema: string): Promise<boolean> {
  const r = await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
    `${quoteIdent(schema)}.search_words_trgm`,
  ]);
  return r.rows[0]?.ok === true;
}

/**
 * Creates the GIN trigram index over `search_words.words` when `pg_trgm` is installed or
 * can be installed (a trusted extension since PostgreSQL 13: needs CREATE on the database).
 * Without it search still works, by scanning `search_words` (never `messages`).
 * Runs inside the caller's transaction; a failure to create the extension is contained in
 * a savepoint.
 */
export async function ensureTrigram(client: PoolClient, schema: string): Promise<boolean> {
  if (await hasTrigramIndex(client, schema)) return true;
  let extSchema = await trigramSchema(client);
  if (extSchema === undefined) {
    await client.query('SAVEPOINT sk_trgm');
    try {
      // Serialise CREATE EXTENSION across schemas (parallel first opens would race on it).
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [
        ADVISORY_LOCK_CLASS,
        EXTENSION_LOCK,
      ]);
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      await client.query('RELEASE SAVEPOINT sk_trgm');
    } catch (e) {
      if (isConnectionError(e)) throw e;
      await client.query('ROLLBACK TO SAVEPOINT sk_trgm');
      warnNoTrigram(schema, e);
      return false;
    }
    extSchema = await trigramSchema(client);
    if (extSchema === undefined) return false;
  }
  const s = quoteIdent(schema);
  // Words rows are inserted by the search indexer only, in batches, off the turn: a 64 kB
  // pending list (the minimum) still merges them in bulk (few distinct trigrams, many rows
  // each), and a larger one would be most of a small store's index; the pages a merge
  // frees are reused.
  await client.query(
    `CREATE INDEX IF NOT EXISTS search_words_trgm ON ${s}.search_words USING gin (words ${quoteIdent(extSchema)}.gin_trgm_ops) WITH (gin_pending_list_limit = 64)`,
  );
  return true;
}

/** The schema pg_trgm is installed in, or undefined when it is not installed. */
async function trigramSchema(client: PoolClient): Promise<string | undefined> {
  const r = await client.query<{ nspname: string }>(
    `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_trgm'`,
  );
  return r.rows[0]?.nspname;
}

const warned = new Set<string>();
function warnNoTrigram(schema: string, e: unknown): void {
  if (warned.has(schema)) return;
  warned.add(schema);
  const reason = e instanceof Error ? e.message : String(e);
  process.emitWarning(
    `[sessionkit/postgres] pg_trgm is not available (${reason}); search in schema "${schema}" scans search_words instead of using a trigram index. Run "CREATE EXTENSION pg_trgm" as a privileged user and reopen the store to index it.`,
    { code: 'SESSIONKIT_PG_NO_TRGM' },
  );
}
