// Schema version 7: the number of root sessions kept by the database, so `enforceMax`
// costs what it deletes, not the number of sessions it keeps.
import type { Migration } from './migration.js';

/**
 * SQL of version 7, given the quoted schema name `s`:
 * - `root_count`: rows whose sum is the number of sessions without a parent. Triggers add
 *   one row per statement that changes it (an `INSERT` or `DELETE` of sessions, once per
 *   statement; an `UPDATE` of `parent_id` that makes or unmakes a root, once per row), so
 *   writers never wait on each other for it; a turn's UPDATE does not name `parent_id` and
 *   fires nothing. `sk_enforce_max` folds the rows into one before it counts.
 * - `sk_enforce_max` replaced: instead of walking past the `p_max` newest roots
 *   (`OFFSET p_max`: 1,000,000 index entries at a million sessions) it takes the
 *   `count - p_max` oldest from the other end of the same index, locks them, and re-checks
 *   them under the lock against a fresh count, as version 3 re-checked them.
 */
export function rootCountSql(s: string): string {
  return `
CREATE TABLE ${s}.root_count (n bigint NOT NULL);
INSERT INTO ${s}.root_count SELECT count(*) FROM ${s}.sessions WHERE parent_id IS NULL;

CREATE FUNCTION ${s}.sk_roots_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO ${s}.root_count (n)
    SELECT count(*) FROM new_rows WHERE parent_id IS NULL HAVING count(*) > 0;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER sessions_roots_inserted AFTER INSERT ON ${s}.sessions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${s}.sk_roots_inserted();

CREATE FUNCTION ${s}.sk_roots_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO ${s}.root_count (n)
    SELECT -count(*) FROM old_rows WHERE parent_id IS NULL HAVING count(*) > 0;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER sessions_roots_deleted AFTER DELETE ON ${s}.sessions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${s}.sk_roots_deleted();

CREATE FUNCTION ${s}.sk_root_moved() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO ${s}.root_count (n) VALUES (CASE WHEN NEW.parent_id IS NULL THEN 1 ELSE -1 END);
  RETURN NULL;
END
$fn$;
CREATE TRIGGER sessions_root_moved AFTER UPDATE OF parent_id ON ${s}.sessions
  FOR EACH ROW WHEN ((OLD.parent_id IS NULL) <> (NEW.parent_id IS NULL))
  EXECUTE FUNCTION ${s}.sk_root_moved();

CREATE OR REPLACE FUNCTION ${s}.sk_enforce_max(p_max bigint) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  victims text[];
  roots bigint;
  deleted integer;
BEGIN
  -- One row again (a concurrent fold waits for this one and then folds what is left).
  WITH d AS (DELETE FROM ${s}.root_count RETURNING n)
  INSERT INTO ${s}.root_count (n) SELECT coalesce(sum(d.n), 0) FROM d;
  SELECT sum(r.n) INTO roots FROM ${s}.root_count AS r;
  IF roots <= p_max THEN
    RETURN 0;
  END IF;
  SELECT coalesce(array_agg(v.id), '{}') INTO victims FROM (
    SELECT s.id FROM ${s}.sessions AS s WHERE s.parent_id IS NULL
    ORDER BY s.updated_at, s.id LIMIT roots - p_max
  ) AS v;
  IF cardinality(victims) = 0 THEN
    RETURN 0;
  END IF;
  PERFORM 1 FROM ${s}.sessions AS s WHERE s.id = ANY (victims) ORDER BY s.id FOR UPDATE;
  -- Once locked: still among the oldest past the newest p_max (a commit may have made one
  -- of them new meanwhile: the next pass takes the one that is now the oldest).
  SELECT sum(r.n) INTO roots FROM ${s}.root_count AS r;
  SELECT coalesce(array_agg(v.id), '{}') INTO victims FROM (
    SELECT s.id FROM ${s}.sessions AS s WHERE s.parent_id IS NULL
    ORDER BY s.updated_at, s.id LIMIT greatest(roots - p_max, 0)
  ) AS v WHERE v.id = ANY (victims);
  IF cardinality(victims) = 0 THEN
    RETURN 0;
  END IF;
  -- core's promotedChild for a deleted root: no parent, no merge base, branchedAtTurn
  -- and rewrites kept (test: "enforceMax promotions equal promotedChild").
  UPDATE ${s}.sessions AS c SET parent_id = NULL, merge_base = NULL
    WHERE c.parent_id = ANY (victims) AND NOT (c.id = ANY (victims));
  DELETE FROM ${s}.follows AS f WHERE f.target = ANY (victims);
  DELETE FROM ${s}.messages AS m WHERE m.session_id = ANY (victims);
  DELETE FROM ${s}.search_chunks AS k WHERE k.session_id = ANY (victims);
  DELETE FROM ${s}.search_words AS w WHERE w.session_id = ANY (victims);
  DELETE FROM ${s}.search_pending AS p WHERE p.ctid = ANY (ARRAY(
    SELECT q.ctid FROM ${s}.search_pending AS q
    WHERE q.session_id = ANY (victims) FOR UPDATE SKIP LOCKED));
  DELETE FROM ${s}.sessions AS s WHERE s.id = ANY (victims);
  GET DIAGNOSTICS deleted = ROW_COUNT;
  RETURN deleted;
END
$fn$;
`;
}

/** Version 7 of the schema (see `rootCountSql`). */
export const migration007: Migration = {
  version: 7,
  name: 'root_count',
  sql: rootCountSql,
};
