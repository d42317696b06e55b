// Query parameters of `postgres://` store URLs: the documented ones are honoured, any
// other is rejected (a typo must not be silently ignored).
import type { PoolConfig } from 'pg';
import { errors } from './errors.js';

/**
 * Connection parameters passed to node-postgres as they are (it reads them from the
 * connection string): TLS (`sslmode`, `ssl`, `sslcert`, `sslkey`, `sslrootcert`,
 * `sslnegotiation`, `uselibpqcompat`), `host` (e.g. a Unix socket directory),
 * `application_name`, `fallback_application_name`, `client_encoding`, `options` (e.g.
 * `-c search_path=…`), and the server-side timeouts `statement_timeout`, `lock_timeout`,
 * `idle_in_transaction_session_timeout` plus the client-side `query_timeout` (ms).
 */
export const PG_URL_PARAMS: readonly string[] = [
  'application_name',
  'client_encoding',
  'fallback_application_name',
  'host',
  'idle_in_transaction_session_timeout',
  'lock_timeout',
  'options',
  'query_timeout',
  'ssl',
  'sslcert',
  'sslkey',
  'sslmode',
  'sslnegotiation',
  'sslrootcert',
  'statement_timeout',
  'uselibpqcompat',
];

/**
 * Parameters the adapter itself reads (and removes before the URL reaches pg): `schema`
 * (the store's schema), `connect_timeout` (seconds, a non-negative integer, as libpq
 * reads it: becomes the pool's `connectionTimeoutMillis`; node-postgres itself ignores it)
 * and `search` (the search scope: `messages`, `titles` or `none`).
 */
export const ADAPTER_URL_PARAMS: readonly string[] = ['schema', 'connect_timeout', 'search'];

const NUMERIC = new Set([
  'statement_timeout',
  'lock_timeout',
  'idle_in_transaction_session_timeout',
  'query_timeout',
  'connect_timeout',
]);

/** What a store URL asks for: pg's connection settings, the schema and search scope if given. */
export interface ParsedStoreUrl {
  config: PoolConfig;
  schema: string | undefined;
  /** Checked by `openPostgresStore` (`assertSearchScope`). */
  search: string | undefined;
}

/**
 * Splits a store URL into pg's settings and the adapter's. Throws `invalid_argument` for
 * an unknown parameter (naming it and listing the known ones), a parameter given twice,
 * or a timeout that is not a non-negative integer.
 */
export function parseStoreUrl(url: URL): ParsedStoreUrl {
  const copy = new URL(url.href);
  const known = [...ADAPTER_URL_PARAMS, ...PG_URL_PARAMS];
  const seen = new Set<string>();
  for (const key of copy.searchParams.keys()) {
    if (!known.includes(key)) {
      throw errors.invalid(
        `openStore(postgres:): unknown URL parameter "${key.slice(0, 64)}"; known: ${known.join(', ')}`,
      );
    }
    if (seen.has(key)) {
      throw errors.invalid(`openStore(postgres:): URL parameter "${key}" is given more than once`);
    }
    seen.add(key);
    const value = copy.searchParams.get(key) ?? '';
    if (NUMERIC.has(key) && !/^\d{1,9}$/.test(value)) {
      throw errors.invalid(
        `openStore(postgres:): URL parameter "${key}" must be a non-negative integer, got ${JSON.stringify(value.slice(0, 32))}`,
      );
    }
  }
  const schema = copy.searchParams.get('schema') ?? undefined;
  const search = copy.searchParams.get('search') ?? undefined;
  const timeout = copy.searchParams.get('connect_timeout');
  for (const key of ADAPTER_URL_PARAMS) copy.searchParams.delete(key);
  const config: PoolConfig = { connectionString: copy.href };
  if (timeout !== null) config.connectionTimeoutMillis = Number(timeout) * 1000;
  return { config, schema, search };
}
