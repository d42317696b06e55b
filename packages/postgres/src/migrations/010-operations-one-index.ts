// Schema version 10: an operation id costs one heap row and one index entry per commit
// (issue 25: a commit with an id within 1.1x of one without). The session's oldest ids are
// forgotten in batches, so each session remembers at least its last 1,000 ids (core's rule).
import { rootCountSql } from './007-root-count.js';
import { operationsSql, REMEMBERED_OPERATIONS } from './008-operations-truncate.js';
import type { Migration } from './migration.js';

/**
 * Named commits between two forgets: a commit whose ordinal `n` is a multiple of this
 * deletes the session's ids older than its last `REMEMBERED_OPERATIONS`, so a session holds
 * 1,000 to 1,099 of them and a commit deletes nothing in between.
 */
export const FORGET_OPERATIONS_EVERY = 100;

/** Whether a condition on the ordinal `n` of a named commit (SQL) makes it forget. */
export function forgetsAt(n: string): string {
  return `${n} % ${FORGET_OPERATIONS_EVERY} = 0`;
}

/** The ids a session with `n` named commits no longer needs (SQL condition over alias `o`). */
export function forgottenBy(n: string): string {
  return `o.n <= ${n} - ${REMEMBERED_OPERATIONS}`;
}

/** `fragment` replaced in `text`; throws when it is missing (the released SQL it edits moved). */
function replaced(text: string, fragment: string, by: string): string {
  if (!text.includes(fragment)) throw new Error(`migration 10: "${fragment}" not found`);
  return text.replace(fragment, by);
}

/** Version 8's `sk_commit` forgetting in batches (same signature, so replaced in place). */
function commitFunctionSql(s: string): string {
  const v8 = operationsSql(s);
  const fn = v8.slice(v8.indexOf(`CREATE FUNCTION ${s}.sk_commit(`));
  return replaced(
    replaced(fn, `CREATE FUNCTION ${s}.sk_commit(`, `CREATE OR REPLACE FUNCTION ${s}.sk_commit(`),
    `DELETE FROM ${s}.operations AS o
      WHERE o.session_id = p_id AND o.n = v_ops - ${REMEMBERED_OPERATIONS};`,
    `IF ${forgetsAt('v_ops')} THEN
      DELETE FROM ${s}.operations AS o WHERE o.session_id = p_id AND ${forgottenBy('v_ops')};
    END IF;`,
  );
}

/** Version 7's `sk_enforce_max` also deleting the victims' operation ids (no cascade any more). */
function enforceMaxSql(s: string): string {
  const v7 = rootCountSql(s);
  const fn = v7.slice(v7.indexOf(`CREATE OR REPLACE FUNCTION ${s}.sk_enforce_max(`));
  return replaced(
    fn,
    `DELETE FROM ${s}.sessions AS s WHERE s.id = ANY (victims);`,
    `DELETE FROM ${s}.operations AS o WHERE o.session_id = ANY (victims);
  DELETE FROM ${s}.sessions AS s WHERE s.id = ANY (victims);`,
  );
}

/**
 * SQL of version 10, given the quoted schema name `s`:
 * - `operations` loses its foreign key to `sessions` and its `(session_id, n)` index: the
 *   key's check was a trigger and a row lock per named commit, on a row the same statement
 *   has just locked by updating it, and the ordinal index an index entry per commit for a
 *   delete that finds a row once per commit. Like `messages`, operation rows are written
 *   only under their session's row lock, and every delete of a session deletes them
 *   (`sk_enforce_max` here, delete's statement in statements/lineage.ts).
 * - `sk_commit` (and the plain turn, statements/append.ts) forget the ids past the last
 *   1,000 every `FORGET_OPERATIONS_EVERY`-th named commit, reading the session's rows by
 *   the primary key's `session_id` prefix.
 */
export function operationsOneIndexSql(s: string): string {
  const lit = s.replaceAll("'", "''");
  return `
DO $do$
DECLARE fk text;
BEGIN
  FOR fk IN SELECT c.conname FROM pg_constraint AS c
    WHERE c.conrelid = '${lit}.operations'::regclass AND c.contype = 'f'
  LOOP
    EXECUTE format('ALTER TABLE ${lit}.operations DROP CONSTRAINT %I', fk);
  END LOOP;
END $do$;
DROP INDEX ${s}.operations_ordinal;
${commitFunctionSql(s)}
${enforceMaxSql(s)}
`;
}

/** Version 10 of the schema (see `operationsOneIndexSql`). */
export const migration010: Migration = {
  version: 10,
  name: 'operations_one_index',
  sql: operationsOneIndexSql,
};
