// Schema version 3. Released: never edit (databases record that they ran it).
import type { Migration } from './migration.js';

/**
 * sk_enforce_max v2 took its candidates with `ORDER BY … OFFSET p_max FOR UPDATE`,
 * which locks the rows OFFSET skips as well: every root it kept, so every commit to
 * any root waited for the retention pass. v3 picks the candidates without a lock,
 * locks only those (in id order), then re-selects them as v2 did.
 */
export const migration003: Migration = {
  version: 3,
  name: 'enforce_max_locks_only_victims',
  sql: (s) => `
CREATE OR REPLACE FUNCTION ${s}.sk_enforce_max(p_max bigint) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  victims text[];
  n integer;
BEGIN
  SELECT coalesce(array_agg(v.id), '{}') INTO victims FROM (
    SELECT s.id FROM ${s}.sessions AS s WHERE s.parent_id IS NULL
    ORDER BY s.updated_at DESC, s.id DESC OFFSET p_max
  ) AS v;
  IF cardinality(victims) = 0 THEN
    RETURN 0;
  END IF;
  PERFORM 1 FROM ${s}.sessions AS s WHERE s.id = ANY (victims) ORDER BY s.id FOR UPDATE;
  SELECT coalesce(array_agg(v.id), '{}') INTO victims FROM (
    SELECT s.id FROM ${s}.sessions AS s WHERE s.parent_id IS NULL
    ORDER BY s.updated_at DESC, s.id DESC OFFSET p_max
  ) AS v WHERE v.id = ANY (victims);
  IF cardinality(victims) = 0 THEN
    RETURN 0;
  END IF;
  UPDATE ${s}.sessions AS c SET parent_id = NULL
    WHERE c.parent_id = ANY (victims) AND NOT (c.id = ANY (victims));
  DELETE FROM ${s}.follows AS f WHERE f.target = ANY (victims);
  DELETE FROM ${s}.messages AS m WHERE m.session_id = ANY (victims);
  DELETE FROM ${s}.search_rows AS x WHERE x.session_id = ANY (victims);
  DELETE FROM ${s}.sessions AS s WHERE s.id = ANY (victims);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END
$fn$;
`,
};
