// The building blocks of the statements modules (statements/*.ts): a SQL text typed by the
// rows it returns, and the header columns every summary and session reads.
import type { QueryResultRow } from 'pg';

/**
 * A SQL text for one schema and, as a type only, the rows it returns; `name` makes it a
 * prepared statement (unique per connection and schema, at most 63 bytes).
 */
export interface Sql<R extends QueryResultRow = QueryResultRow> {
  readonly text: string;
  readonly name?: string | undefined;
  /** Never set: carries the row type `R` to `TxRunner.query` and `run`. */
  readonly rows?: R[];
}

/** A statement returning rows of type `R` (see `Sql`). */
export function sql<R extends QueryResultRow = QueryResultRow>(
  text: string,
  name?: string,
): Sql<R> {
  return name === undefined ? { text } : { text, name };
}

/** A statement and its parameters (built whole, e.g. the listing query). */
export interface Statement {
  text: string;
  values: unknown[];
}

/** The header columns of `sessions` every summary and session needs (never message bodies). */
export function headerColumns(alias: string, s: string): string {
  const a = alias;
  return `${a}.id, ${a}.title, ${a}.folder, ${a}.parent_id, ${a}.created_at, ${a}.updated_at,
  ${a}.model, ${a}.provider, ${a}.token_count, ${a}.cost_usd, ${a}.turn_count, ${a}.metadata,
  ${a}.status, ${a}.branched_at_turn, ${a}.revision, ${a}.archived_at, ${a}.mode, ${a}.state,
  ${a}.message_count,
  ARRAY(SELECT c.id::text FROM ${s}.sessions AS c WHERE c.parent_id = ${a}.id ORDER BY c.id) AS children`;
}
