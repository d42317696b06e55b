// Schema version 2. Released: never edit (databases record that they ran it).
import type { Migration } from './migration.js';

/**
 * sk_delete v1 re-parented the children to the parent without locking it: a
 * concurrent delete of that parent (or enforceMax) could miss them and leave them
 * pointing at a deleted session. v2 locks the parent first (FOR KEY SHARE: commits
 * to the parent still run), then the session — the parent → child order every
 * writer that re-parents or merges takes — and re-checks the parent under the lock.
 */
export const migration002: Migration = {
  version: 2,
  name: 'delete_locks_parent_enforce_max_recheck',
  sql: (s) => `
CREATE OR REPLACE FUNCTION ${s}.sk_delete(p_id text) RETURNS boolean LANGUAGE plpgsql AS $fn$
DECLARE
  v_parent text;
  v_now text;
  v_found boolean;
BEGIN
  FOR attempt IN 1..100 LOOP
    SELECT s.parent_id INTO v_parent FROM ${s}.sessions AS s WHERE s.id = p_id;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
    IF v_parent IS NOT NULL THEN
      PERFORM 1 FROM ${s}.sessions AS s WHERE s.id = v_parent FOR KEY SHARE;
      v_found := FOUND;
    ELSE
      v_found := true;
    END IF;
    SELECT s.parent_id INTO v_now FROM ${s}.sessions AS s WHERE s.id = p_id FOR UPDATE;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
    -- The parent vanished or changed while we waited (a concurrent delete promoted
    -- this session): start over with the new parent.
    EXIT WHEN v_found AND v_now IS NOT DISTINCT FROM v_parent;
  END LOOP;
  IF NOT (v_found AND v_now IS NOT DISTINCT FROM v_parent) THEN
    RAISE EXCEPTION 'sk_delete: the parent of % keeps changing', p_id USING ERRCODE = '40001';
  END IF;
  UPDATE ${s}.sessions AS c
    SET parent_id = CASE WHEN v_parent = c.id THEN NULL ELSE v_parent END
    WHERE c.parent_id = p_id;
  DELETE FROM ${s}.follows AS f WHERE f.target = p_id;
  DELETE FROM ${s}.messages AS m WHERE m.session_id = p_id;
  DELETE FROM ${s}.search_rows AS x WHERE x.session_id = p_id;
  DELETE FROM ${s}.sessions AS s WHERE s.id = p_id;
  RETURN true;
END
$fn$;

-- sk_enforce_max v1 deleted every root it locked, even one that a commit made the
-- newest while the retention pass waited for its lock (FOR UPDATE re-checks the WHERE,
-- not the ORDER BY / OFFSET). v2 re-selects the victims once the locks are held and
-- skips the ones that moved into the newest p_max.
CREATE OR REPLACE FUNCTION ${s}.sk_enforce_max(p_max bigint) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  victims text[];
  n integer;
BEGIN
  SELECT coalesce(array_agg(v.id), '{}') INTO victims FROM (
    SELECT s.id FROM ${s}.sessions AS s WHERE s.parent_id IS NULL
    ORDER BY s.updated_at DESC, s.id DESC OFFSET p_max FOR UPDATE
  ) AS v;
  IF cardinality(victims) = 0 THEN
    RETURN 0;
  END IF;
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
