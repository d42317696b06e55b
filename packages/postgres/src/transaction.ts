// How the store runs SQL: one statement through the pool, or a function in one transaction
// on one client, each run again after a deadlock or serialization failure, with driver
// errors mapped to sessionkit errors (errors.ts). Checked-out clients are borrowed through
// connection.ts (a broken client is discarded, never reused); client-guard.ts covers the
// moment between the pool handing a client out and the borrower listening to it.
import { isSessionKitError } from '@sessionkit/core';
import { LOST_RACE, retryLostRaces } from '@sessionkit/core/adapter';
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { borrowClient, isConnectionError } from './connection.js';
import { errors, isRetryableTxError, wrapDriverError } from './errors.js';
import type { Sql } from './sql.js';

/** How often a statement or transaction is retried after a deadlock or serialization failure. */
const MAX_TX_RETRIES = 5;

/** Counters the runner keeps (the store's `stats`). */
export interface TxStats {
  /** Statements and transactions run again after a deadlock or serialization failure. */
  txRetries: number;
}

/** What a failed statement was doing, for the error message; `notFoundOnFk` see `query`. */
export interface QueryOptions {
  doing: string;
  /**
   * The session id to report `not_found` for when the statement fails with a foreign-key
   * violation (23503): the session was deleted between the existence check and the insert.
   */
  notFoundOnFk?: string | undefined;
  /**
   * A unique violation (23505) means another writer got in first and this statement wrote
   * nothing (a commit naming an operation id another commit just recorded): throw
   * `LOST_TO_UNIQUE` instead of an error, for the caller's lost-race loop.
   */
  uniqueLosesRace?: boolean | undefined;
}

/** Thrown by `query` for a unique violation when `uniqueLosesRace` is set. */
export const LOST_TO_UNIQUE: unique symbol = Symbol('sessionkit.postgres.lostToUnique');

/** How `TxRunner.tx` commits. */
export interface TxOptions {
  /**
   * Commit with `synchronous_commit = off`: the COMMIT returns once its record is in the
   * WAL buffers, and the WAL writer flushes it within ~200 ms (or any later synchronous
   * commit does, as WAL is flushed in order). A server crash before then undoes the whole
   * transaction, never part of it, and never a synchronous commit that came after it.
   * For derived work only (the search indexer's moves: undone, their rows are pending again).
   */
  asyncCommit?: boolean | undefined;
}

/** BEGIN with the transaction's commit not waiting for its WAL flush (one round trip). */
const BEGIN_ASYNC_COMMIT = 'BEGIN; SET LOCAL synchronous_commit TO off';

/** Runs a statement on `client` (inside the caller's transaction), typed by its `Sql`. */
export function queryOn<R extends QueryResultRow>(
  client: PoolClient,
  statement: Sql<R>,
  values: readonly unknown[],
): Promise<QueryResult<R>> {
  return client.query<R>(configOf(statement, values));
}

function configOf(statement: Sql<QueryResultRow>, values: readonly unknown[]): QueryConfig {
  const config: QueryConfig = { text: statement.text, values: values as unknown[] };
  if (statement.name !== undefined) config.name = statement.name;
  return config;
}

/** The store's access to PostgreSQL: statements and transactions with retries. */
export class TxRunner {
  readonly #pool: Pool;
  readonly #schema: string;
  readonly #stats: TxStats;

  /** `schema` names the store's schema in missing-object errors; `stats` is updated in place. */
  constructor(pool: Pool, schema: string, stats: TxStats) {
    this.#pool = pool;
    this.#schema = schema;
    this.#stats = stats;
  }

  /** One statement through the pool, retried after a deadlock or serialization failure. */
  query<R extends QueryResultRow>(
    statement: Sql<R>,
    values: readonly unknown[],
    options: QueryOptions,
  ): Promise<QueryResult<R>> {
    return this.queryConfig<R>(configOf(statement, values), options);
  }

  /** `query` for a statement built whole (a `QueryConfig` with its values). */
  queryConfig<R extends QueryResultRow>(
    config: QueryConfig,
    { doing, notFoundOnFk, uniqueLosesRace }: QueryOptions,
  ): Promise<QueryResult<R>> {
    return this.#retrying(doing, async () => {
      try {
        return await this.#pool.query<R>(config);
      } catch (e) {
        const code = (e as { code?: unknown }).code;
        if (uniqueLosesRace === true && code === '23505') throw LOST_TO_UNIQUE;
        if (notFoundOnFk !== undefined && code === '23503') throw errors.notFound(notFoundOnFk);
        throw e;
      }
    });
  }

  /**
   * Runs `fn` in a transaction on one client; runs it again (from BEGIN) after a deadlock
   * or serialization failure. A `SessionKitError` thrown by `fn` rolls back and passes
   * through; driver errors are wrapped. A client whose connection failed is discarded.
   * `options.asyncCommit`: the COMMIT does not wait for its WAL to reach the disk (see
   * `TxOptions`); only for work a crash may undo without losing anything acknowledged.
   */
  async tx<T>(
    doing: string,
    fn: (client: PoolClient) => Promise<T>,
    options: TxOptions = {},
  ): Promise<T> {
    const begin = options.asyncCommit === true ? BEGIN_ASYNC_COMMIT : 'BEGIN';
    return this.#retrying(doing, async () => {
      let borrowed: Awaited<ReturnType<typeof borrowClient>>;
      try {
        borrowed = await borrowClient(this.#pool);
      } catch (e) {
        throw wrapDriverError(e, doing, this.#schema);
      }
      const { client } = borrowed;
      try {
        await client.query(begin);
        const out = await fn(client);
        await client.query('COMMIT');
        return out;
      } catch (e) {
        if (isConnectionError(e)) borrowed.discard(e);
        else {
          await client.query('ROLLBACK').catch((rollbackError: unknown) => {
            borrowed.discard(rollbackError);
          });
        }
        throw e;
      } finally {
        borrowed.release();
      }
    });
  }

  /**
   * Runs `attempt` in the kit's lost-race loop: a deadlock or serialization failure
   * (40P01/40001) wrote nothing and is run again, at most MAX_TX_RETRIES times; then it is
   * reported as the driver error. `SessionKitError`s and `LOST_TO_UNIQUE` pass through;
   * other driver errors are wrapped.
   */
  async #retrying<T>(doing: string, attempt: () => Promise<T>): Promise<T> {
    let lost: unknown;
    try {
      return await retryLostRaces(
        {
          errors,
          operation: doing,
          sessionId: '',
          maxRetries: MAX_TX_RETRIES,
          exhausted: () => wrapDriverError(lost, doing, this.#schema),
        },
        async (n) => {
          try {
            return await attempt();
          } catch (e) {
            if (!isRetryableTxError(e) || n >= MAX_TX_RETRIES) throw e;
            lost = e;
            this.#stats.txRetries++;
            return LOST_RACE;
          }
        },
      );
    } catch (e) {
      if (isSessionKitError(e) || e === LOST_TO_UNIQUE) throw e;
      throw wrapDriverError(e, doing, this.#schema);
    }
  }
}
