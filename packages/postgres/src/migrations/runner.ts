// The migration runner: brings a schema to the latest version under an advisory lock, then
// makes sure the trigram index exists (trigram.ts) and the search scope is the one asked
// for (search-scope.ts). The migrations themselves: index.ts.
import type { Pool, PoolClient } from 'pg';
import { borrowClient, isConnectionError } from '../connection.js';
import { errors } from '../errors.js';
import { ADVISORY_LOCK_CLASS, quoteIdent } from '../identifiers.js';
import {
  changeSearchScope,
  type ProgressListener,
  readSearchScope,
  type SearchScope,
} from '../search-scope.js';
import { ensureTrigram, hasTrigramIndex } from '../trigram.js';
import { LATEST_VERSION, MIGRATIONS } from './index.js';

/** What `migrate` found and did. */
export interface MigrationOutcome {
  /** Versions applied by this call (empty when the schema was up to date). */
  applied: number[];
  /** True when the trigram index serves search; false when pg_trgm is unavailable. */
  trigram: boolean;
  /** The schema's search scope after the call. */
  search: SearchScope;
  /** Whether search rows are waiting in `search_pending` (left by a process that exited). */
  pending: boolean;
}

/** What `migrate` is asked for beyond the latest version. */
export interface MigrateOptions {
  /** The search scope to set (rebuilding the search rows when it changes); absent: keep it. */
  search?: SearchScope | undefined;
  /** Called after each batch of a long step. */
  onProgress?: ProgressListener | undefined;
}

/**
 * Brings `schema` to the latest version: creates it when missing, applies each pending
 * migration once and records it in `schema_migrations`, all inside one transaction
 * holding `pg_advisory_xact_lock` keyed on the schema name, so any number of processes
 * may open the same empty database at once. Then makes sure the trigram index exists
 * when the `pg_trgm` extension is available (creating the extension if allowed), and,
 * when `options.search` differs from the recorded scope, records it and rebuilds the
 * search rows in batches under the same lock. Throws the driver's error (the caller wraps it).
 */
export async function migrate(
  pool: Pool,
  schema: string,
  options: MigrateOptions = {},
): Promise<MigrationOutcome> {
  const borrowed = await borrowClient(pool);
  const { client } = borrowed;
  const s = quoteIdent(schema);
  try {
    // Fast path: an up-to-date schema needs no lock.
    const fast = await tryCurrentVersion(client, schema);
    if (fast === LATEST_VERSION && (await hasTrigramIndex(client, schema))) {
      const search = await readSearchScope(client, s);
      if (options.search === undefined || options.search === search) {
        return { applied: [], trigram: true, search, pending: await hasPending(client, s) };
      }
    }
    await client.query('BEGIN');
    try {
      const applied = await applyPending(client, schema);
      const trigram = await ensureTrigram(client, schema);
      let search = await readSearchScope(client, s);
      if (options.search !== undefined && options.search !== search) {
        await changeSearchScope(client, s, search, options.search, options.onProgress);
        search = options.search;
      }
      const pending = await hasPending(client, s);
      await client.query('COMMIT');
      return { applied, trigram, search, pending };
    } catch (e) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        borrowed.discard(rollbackError);
      });
      throw e;
    }
  } catch (e) {
    if (isConnectionError(e)) borrowed.discard(e);
    throw e;
  } finally {
    borrowed.release();
  }
}

/**
 * Inside the caller's transaction: takes the schema's migration lock, creates the schema
 * and `schema_migrations` when missing, and applies the migrations not recorded there.
 * Returns the versions applied.
 */
async function applyPending(client: PoolClient, schema: string): Promise<number[]> {
  const s = quoteIdent(schema);
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
    ADVISORY_LOCK_CLASS,
    schema,
  ]);
  // Only when missing: CREATE SCHEMA checks the database CREATE privilege even with
  // IF NOT EXISTS, and a role may own a schema a DBA created for it without that right.
  const present = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  if (present.rowCount === 0) await client.query(`CREATE SCHEMA ${s}`);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
          version integer PRIMARY KEY,
          name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`,
  );
  const done = await client.query<{ version: number }>(
    `SELECT version FROM ${s}.schema_migrations`,
  );
  const have = new Set(done.rows.map((r) => Number(r.version)));
  assertNotNewer(schema, have);
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (have.has(m.version)) continue;
    await client.query(m.sql(s));
    if (m.run) await m.run(client, s);
    await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
      m.version,
      m.name,
    ]);
    applied.push(m.version);
  }
  return applied;
}

/** Whether `search_pending` of schema `s` (quoted) holds any row. */
async function hasPending(client: PoolClient, s: string): Promise<boolean> {
  const r = await client.query<{ p: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ${s}.search_pending) AS p`,
  );
  return r.rows[0]?.p === true;
}

/**
 * Refuses a schema that a newer release has migrated: this release would write rows the
 * newer schema does not expect (a search table it no longer fills, say). `corrupt`, as
 * the file store answers a folder of a newer format: this package cannot read it.
 */
function assertNotNewer(schema: string, have: ReadonlySet<number>): void {
  const newer = [...have].filter((v) => v > LATEST_VERSION).sort((a, b) => a - b);
  if (newer.length === 0) return;
  throw errors.make(
    'corrupt',
    `schema "${schema}" has migration ${newer.join(', ')}, newer than this package knows (${LATEST_VERSION}) — upgrade @sessionkit/postgres`,
  );
}

/** The schema's newest recorded version, or undefined when it has no `schema_migrations`. */
async function tryCurrentVersion(client: PoolClient, schema: string): Promise<number | undefined> {
  const exists = await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
    `${quoteIdent(schema)}.schema_migrations`,
  ]);
  if (!exists.rows[0]?.ok) return undefined;
  const r = await client.query<{ v: number | null }>(
    `SELECT max(version) AS v FROM ${quoteIdent(schema)}.schema_migrations`,
  );
  return r.rows[0]?.v ?? undefined;
}
