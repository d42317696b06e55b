// Test stores on private schemas: each create() gets a fresh schema, dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { POSTGRES_URL, postgresAvailable } from './env.js';

let counter = 0;

/** A schema name no other test (in any process) uses. */
export function freshSchema(): string {
  counter++;
  return `sk_t_${process.pid}_${counter}_${randomBytes(4).toString('hex')}`;
}

/** A pool on the test server whose idle-client errors never crash the process. */
export function newPool(max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max });
  pool.on('error', () => {});
  return pool;
}

let adminPool: pg.Pool | undefined;
/** A shared pool for direct reads and fault injection. */
export function admin(): pg.Pool {
  adminPool ??= newPool(4);
  return adminPool;
}

export async function endAdmin(): Promise<void> {
  const p = adminPool;
  adminPool = undefined;
  await p?.end();
}

/** Drops a test schema with everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  await admin().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** Pools created for a store's schema (the store's own and its peers'), ended by destroy. */
const poolsOf = new Map<string, pg.Pool[]>();

/** A migrated store on a fresh schema with its own pool. */
export async function freshStore(): Promise<PostgresStore> {
  const schema = freshSchema();
  const pool = newPool();
  poolsOf.set(schema, [pool]);
  const store = new PostgresStore({ pool, schema });
  await store.migrate();
  return store;
}

/** A second store on the same schema with a pool of its own. */
export async function peerOf(store: PostgresStore): Promise<PostgresStore> {
  const pool = newPool();
  poolsOf.get(store.schema)?.push(pool);
  const peer = new PostgresStore({ pool, schema: store.schema });
  await peer.migrate();
  return peer;
}

/** Closes the store, ends every pool of its schema and drops the schema. */
export async function destroyStore(store: PostgresStore): Promise<void> {
  await store.close();
  for (const pool of poolsOf.get(store.schema) ?? []) await pool.end().catch(() => {});
  poolsOf.delete(store.schema);
  await dropSchema(store.schema);
}

/**
 * A migrated store borrowing a fresh pool on a fresh schema, for tests that reach into the
 * pool or schema themselves; `dispose()` closes the store, ends the pool and drops the schema.
 */
export async function borrowedStore(): Promise<{
  schema: string;
  pool: pg.Pool;
  store: PostgresStore;
  dispose(): Promise<void>;
}> {
  const schema = freshSchema();
  const pool = newPool();
  const store = await PostgresStore.fromPool(pool, { schema });
  return {
    schema,
    pool,
    store,
    async dispose() {
      await store.close();
      await pool.end();
      await dropSchema(schema);
    },
  };
}

/**
 * Whether the test server is there (warning once with `what` when it is not), and, when it
 * is, ends the shared admin pool after the calling file's tests.
 */
export function postgresForFile(what: string): boolean {
  const available = postgresAvailable(what);
  afterAll(async () => {
    if (available) await endAdmin();
  });
  return available;
}
