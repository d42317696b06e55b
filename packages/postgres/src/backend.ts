// What one PostgresStore owns besides its primitives: the pool (borrowed or its own), the
// statements and counters of its schema, the migration, the background search indexer and
// the table upkeep.
import { assertKnownKeys } from '@sessionkit/core/adapter';
import type { Pool } from 'pg';
import { guardPool } from './client-guard.js';
import type { StoreContext, StoreStats } from './context.js';
import { errors, wrapDriverError } from './errors.js';
import { assertSchemaName, DEFAULT_SCHEMA } from './identifiers.js';
import { migrate } from './migrations/runner.js';
import { SearchIndexer } from './search-indexer.js';
import { assertSearchScope } from './search-scope.js';
import { statementsFor } from './statements/index.js';
import {
  assertPool,
  type PostgresStoreOptions,
  SETUP_OPTION_KEYS,
  type StoreSetupOptions,
} from './store-options.js';
import { TableUpkeep } from './table-upkeep.js';
import { TxRunner } from './transaction.js';

// How long after a write the background indexer moves pending search rows. A pass costs
// the server about the same whether it takes 5 rows or 50 (its statements and commit), so
// the longer a busy store waits, the less indexing costs per turn; search reads what is
// still pending (exact either way), and half a second of a session's turns is a short read.
const SEARCH_INDEX_DELAY_MS = 500;

// What each pool's new connections are reported to: one 'connect' listener per pool however
// many stores share it (a listener per store would pass Node's listener limit at 11 stores).
const onNewConnection = new WeakMap<Pool, Set<() => void>>();

/** Calls `fn` for every new connection of `pool` until the returned function is called. */
function onConnect(pool: Pool, fn: () => void): () => void {
  let callbacks = onNewConnection.get(pool);
  if (callbacks === undefined) {
    const set = new Set<() => void>();
    callbacks = set;
    onNewConnection.set(pool, set);
    pool.on('connect', () => {
      for (const callback of set) callback();
    });
  }
  callbacks.add(fn);
  const set = callbacks;
  return () => {
    set.delete(fn);
  };
}

/** Marks the options of a store created by `openPostgresStore`: its `close()` ends the pool. */
export const OWNS_POOL = Symbol('sessionkit.postgres.ownsPool');

/** @internal Options with the private ownership flag. */
export type InternalStoreOptions = PostgresStoreOptions & { [OWNS_POOL]?: boolean };

/** The pool, schema, migration, indexer and upkeep of one store. */
export class PostgresBackend {
  readonly schema: string;
  readonly stats: StoreStats = {
    messageBodyReads: 0,
    txRetries: 0,
    searchRowsIndexed: 0,
    searchIndexFailures: 0,
  };
  readonly ctx: StoreContext;
  readonly indexer: SearchIndexer;
  readonly upkeep: TableUpkeep;
  readonly #pool: Pool;
  readonly #ownsPool: boolean;
  readonly #setup: StoreSetupOptions;
  readonly #unguard: () => void;
  /** Stops telling the indexer of new connections (see the constructor). */
  readonly #offConnect: () => void;
  #migrated: Promise<void> | undefined;
  #ended: Promise<void> | undefined;

  /** Checks `options` (`invalid_argument`) and builds what the store works with; no I/O. */
  constructor(options: PostgresStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw errors.invalid('PostgresStore: options must be an object');
    }
    assertKnownKeys(errors, options, ['pool', ...SETUP_OPTION_KEYS], 'PostgresStore');
    const pool = options.pool as Pool | undefined;
    assertPool(pool);
    const schema = options.schema ?? DEFAULT_SCHEMA;
    assertSchemaName(errors, schema);
    assertSearchScope(errors, options.search);
    if (
      options.onMigrationProgress !== undefined &&
      typeof options.onMigrationProgress !== 'function'
    ) {
      throw errors.invalid('PostgresStore: onMigrationProgress must be a function');
    }
    this.schema = schema;
    this.#pool = pool;
    this.#ownsPool = (options as InternalStoreOptions)[OWNS_POOL] === true;
    this.#setup = { search: options.search, onMigrationProgress: options.onMigrationProgress };
    this.ctx = {
      db: new TxRunner(pool, schema, this.stats),
      statements: statementsFor(schema),
      stats: this.stats,
      search: { scope: options.search ?? 'messages', noteWrite: () => this.indexer.noteWrite() },
      upkeep: { noteSessions: (n) => this.upkeep.noteSessions(n) },
    };
    this.indexer = new SearchIndexer(this.ctx, SEARCH_INDEX_DELAY_MS);
    this.upkeep = new TableUpkeep(this.ctx);
    this.indexer.onTaken = (taken, wordsRows) => this.upkeep.noteIndexed(taken, wordsRows);
    this.#unguard = guardPool(pool, this.#ownsPool);
    // A new connection may follow a server crash that undid indexing passes (search-indexer.ts).
    this.#offConnect = onConnect(pool, () => this.indexer.forgetBlocks());
  }

  /**
   * Creates and migrates the schema, once (again after a failure, which is reported as
   * `wrapDriverError` maps it); learns the schema's search scope.
   */
  migrate(): Promise<void> {
    this.#migrated ??= migrate(this.#pool, this.schema, {
      search: this.#setup.search,
      onProgress: this.#setup.onMigrationProgress,
    }).then(
      (outcome) => {
        this.ctx.search.scope = outcome.search;
        // Rows a process left pending when it exited: moved by a pass shortly.
        if (outcome.pending) this.indexer.noteWrite();
      },
      (e: unknown) => {
        this.#migrated = undefined;
        throw wrapDriverError(e, `migrating schema "${this.schema}"`, this.schema);
      },
    );
    return this.#migrated;
  }

  /** Stops the background work and, for an owned pool, ends it (a borrowed one stays open). */
  async close(): Promise<void> {
    this.indexer.close();
    this.upkeep.close();
    this.#offConnect();
    if (!this.#ownsPool) return this.#unguard();
    this.#ended ??= this.#pool
      .end()
      .catch(() => {})
      .finally(() => this.#unguard());
    await this.#ended;
  }
}
