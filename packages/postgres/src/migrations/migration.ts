import type { PoolClient } from 'pg';

/** One versioned step of the schema. Applied in order, each once, inside the migration lock. */
export interface Migration {
  version: number;
  name: string;
  /** The SQL, given the quoted schema name. */
  sql(s: string): string;
  /**
   * A step in JavaScript after the SQL, in the same transaction (e.g. recomputing derived
   * data with core's functions), given the migrating client and the quoted schema name.
   */
  run?(client: PoolClient, s: string): Promise<void>;
}
