import type { Statements } from './statements/index.js';
import type { TxRunner, TxStats } from './transaction.js';

/** The store's counters (see `PostgresStore.stats`). */
export interface StoreStats extends TxStats {
  /** Statements run that read rows of the `messages` table. */
  messageBodyReads: number;
}

/** What the role modules (commit.ts, router.ts, repair.ts …) work with. */
export interface StoreContext {
  readonly db: TxRunner;
  readonly statements: Statements;
  readonly stats: StoreStats;
}
