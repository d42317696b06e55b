import type { Message, Store } from '@sessionkit/core';
import { redactUrl } from '@sessionkit/core';
import type { StoreAdapter } from '@sessionkit/core/adapter';
import { assertKnownKeys } from '@sessionkit/core/adapter';
import type { Pool, PoolConfig } from 'pg';
import pg from 'pg';
import { type InternalStoreOptions, OWNS_POOL } from './backend.js';
import { errors, wrapDriverError } from './errors.js';
import { assertSchemaName } from './identifiers.js';
import { assertSearchScope } from './search-scope.js';
import { PostgresStore } from './store.js';
import { SETUP_OPTION_KEYS, type StoreSetupOptions } from './store-options.js';
import { parseStoreUrl } from './url-options.js';

/**
 * Options of `openPostgresStore`: `schema` (created and migrated on open; default
 * `"sessionkit"`), `search` (the search scope) and `onMigrationProgress`, as
 * `PostgresStoreOptions` describes them.
 */
export type OpenPostgresStoreOptions = StoreSetupOptions;

/**
 * Opens a store that owns its pool: a new `pg.Pool` from a connection string
 * (`postgres://user:pass@host:5432/db`) or a `PoolConfig`, with the schema created and
 * migrated before it resolves. `close()` ends the pool. Idle-client errors of the owned
 * pool are absorbed (the pool discards the broken client), so a database restart never
 * crashes the process; later calls reconnect.
 *
 * Throws `invalid_argument` (bad options, schema or connection URL), `unavailable` when
 * PostgreSQL cannot be reached, `corrupt` when the migration fails with an unexpected
 * SQLSTATE such as `42501` (no right to create the schema) — the pool is ended either way
 * and the message never carries the password.
 */
export async function openPostgresStore<M = Message>(
  connection: string | PoolConfig,
  options: OpenPostgresStoreOptions = {},
): Promise<PostgresStore<M>> {
  assertKnownKeys(errors, options, SETUP_OPTION_KEYS, 'openPostgresStore');
  if (options.schema !== undefined) assertSchemaName(errors, options.schema);
  assertSearchScope(errors, options.search);
  let config: PoolConfig;
  if (typeof connection === 'string') {
    if (connection === '') throw errors.invalid('openPostgresStore: empty connection string');
    config = { connectionString: connection };
  } else if (typeof connection === 'object' && connection !== null) {
    config = { ...connection };
  } else {
    throw errors.invalid('openPostgresStore: pass a connection string or a pg PoolConfig');
  }
  let pool: Pool;
  try {
    pool = new pg.Pool(config);
  } catch {
    // pg-connection-string errors may quote the string: never pass them on.
    throw errors.invalid(
      `openPostgresStore: cannot parse the connection (${typeof connection === 'string' ? redactUrl(connection) : 'PoolConfig'})`,
    );
  }
  // An idle client whose connection drops emits 'error' on the pool; without a listener
  // Node would crash. The pool has already removed that client: nothing else to do.
  pool.on('error', () => {});
  const owned: InternalStoreOptions = { ...options, pool, [OWNS_POOL]: true };
  const store = new PostgresStore<M>(owned);
  try {
    await store.migrate();
  } catch (e) {
    await store.close();
    throw wrapDriverError(e, 'openPostgresStore');
  }
  return store;
}

/**
 * Opens `postgres://` and `postgresql://` URLs for core's `openStore`. Query parameters
 * (see url-options.ts and the README): `schema=NAME` (or `options.schema`, default
 * `"sessionkit"`), `connect_timeout=SECONDS`, `search=messages|titles|none`, and the connection parameters node-postgres
 * reads itself (`sslmode`, `application_name`, `statement_timeout` …, listed in
 * `PG_URL_PARAMS`), passed on as they are. The store owns its pool. Throws
 * `invalid_argument` for any other parameter (naming it), a bad value or schema, a schema
 * given both ways; `unavailable`.
 */
export const storeAdapter: StoreAdapter = {
  schemes: ['postgres', 'postgresql'],
  async open(url: URL, options?: Record<string, unknown>): Promise<Store<Message>> {
    assertKnownKeys(errors, options, ['schema'], 'openStore(postgres:)');
    const { config, schema: fromUrl, search } = parseStoreUrl(url);
    const fromOptions = options?.schema;
    if (fromUrl !== undefined && fromOptions !== undefined && fromUrl !== fromOptions) {
      throw errors.invalid(
        'openStore(postgres:): give the schema in the URL or in options, not both',
      );
    }
    const schema = fromUrl ?? (fromOptions as string | undefined);
    if (schema !== undefined) assertSchemaName(errors, schema);
    assertSearchScope(errors, search);
    return openPostgresStore<Message>(config, { schema, search });
  },
};
