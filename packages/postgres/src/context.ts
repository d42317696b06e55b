import type { SearchScope } from './search-scope.js';
import type { Statements } from './statements/index.js';
import type { TxRunner, TxStats } from './transaction.js';

/** The store's counters (see `PostgresStore.stats`). */
export interface StoreStats extends TxStats {
  /** Statements run that read rows of the `messages` table. */
  messageBodyReads: number;
  /** Pending search rows this store's indexer wrote into the index (search-indexer.ts). */
  searchRowsIndexed: number;
  /** Background indexing passes that failed (their rows stay pending and searchable). */
  searchIndexFailures: number;
}

/** What the schema's search covers, known once the store is migrated. */
export interface SearchState {
  scope: SearchScope;
  /** Called after a write that left pending search rows (schedules the indexer). */
  noteWrite(): void;
}

/** What the store's table upkeep is told (table-upkeep.ts). */
export interface UpkeepState {
  /** `n` sessions were created or deleted. */
  noteSessions(n: number): void;
}

/** What the role modules (commit.ts, router.ts, repair.ts …) work with. */
export interface StoreContext {
  readonly db: TxRunner;
  readonly statements: Statements;
  readonly stats: StoreStats;
  readonly search: SearchState;
  readonly upkeep: UpkeepState;
}
