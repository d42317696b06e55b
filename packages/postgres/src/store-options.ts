// The options of PostgresStore, PostgresStore.fromPool and openPostgresStore.
import type { Pool } from 'pg';
import { errors } from './errors.js';
import type { ProgressListener, SearchScope } from './search-scope.js';

/** Options of `new PostgresStore(options)`. */
export interface PostgresStoreOptions {
  /** The node-postgres pool to borrow. `close()` leaves it open: its lifecycle is yours. */
  pool: Pool;
  /**
   * The schema holding the tables; created and migrated on first use. A plain
   * identifier (`[A-Za-z_][A-Za-z0-9_]*`, at most 63 chars, not `pg_…`). Default
   * `"sessionkit"`.
   */
  schema?: string | undefined;
  /**
   * What `list({ query })` searches, recorded in the schema: `"messages"` (the title and
   * each message's text, as the contract says), `"titles"` (titles only: turns write no
   * search text), `"none"` (no search text; a query is `invalid_argument`). Opening with
   * another value than the recorded one changes it for every store on the schema,
   * rebuilding the search rows (see the README). Default: keep the recorded scope
   * (`"messages"` for a new schema).
   */
  search?: SearchScope | undefined;
  /** Called after each batch of a long migration step (e.g. a search-scope rebuild). */
  onMigrationProgress?: ProgressListener | undefined;
}

/** The options of `PostgresStore.fromPool` and `openPostgresStore` besides the pool. */
export type StoreSetupOptions = Omit<PostgresStoreOptions, 'pool'>;

/** Option keys besides `pool`, for `assertKnownKeys`. */
export const SETUP_OPTION_KEYS = ['schema', 'search', 'onMigrationProgress'] as const;

/** Throws `invalid_argument` unless `pool` is a pg Pool (not a Client). */
export function assertPool(pool: Pool | undefined): asserts pool is Pool {
  if (
    !pool ||
    typeof pool.query !== 'function' ||
    typeof (pool as { connect?: unknown }).connect !== 'function' ||
    // A pg Client has query and connect too, but no pool counters.
    typeof (pool as { totalCount?: unknown }).totalCount !== 'number'
  ) {
    throw errors.invalid('PostgresStore: options.pool must be a pg Pool (not a Client)');
  }
}
