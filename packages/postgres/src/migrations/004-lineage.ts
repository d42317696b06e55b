// Schema version 4: merge lineage, counter results checked in the database, search rows
// that never match across two messages, delete with promotion done by the client.
import type { PoolClient } from 'pg';
import type { Migration } from './migration.js';
import { rebuildAllSearchRows } from './v4-search-rows.js';

// The largest integer a counter holds (Number.MAX_SAFE_INTEGER).
const MAX_COUNT = '9007199254740991';

/**
 * SQL of version 4, given the quoted schema name `s`:
 * - `sessions.history_rewrites` (bigint, default 0) and `sessions.merge_base` (jsonb, null
 *   when the session has no base): core's `HistoryLineage` `{rewrites, base}` beside the
 *   header. Rows stored before version 4 read as `{rewrites: 0}` without a base, which is
 *   what core's `readLineage(undefined)` gives.
 * - `sk_count_ok` / `sk_cost_ok`: whether an increment's RESULT stays in the counter's
 *   range (safe integer ≥ 0; finite double ≥ 0), decided exactly as core's
 *   `incrementedCount` / `incrementedCost` decide it, without ever raising a float
 *   overflow or underflow error.
 * - `sk_commit` / `sk_append` replaced: an increment whose result leaves the range is not
 *   written (code `out_of_range`, with the stored counters so the client raises core's
 *   error); `-0` cannot reach them (node-postgres sends it as `0`); `sk_commit` takes
 *   `p_rewrite` (core's `committedLineage` / `savedLineage` decided it) and adds it to
 *   `history_rewrites`.
 * - `sk_delete` dropped: delete runs in the client (promotion is core's `promotedChild`),
 *   after `sk_delete_lock` locked the parent and the session and returned its lineage
 *   (a session whose parent does not exist is deleted like any other).
 * - `sk_enforce_max` replaced: the children of a deleted root lose their parent and
 *   their merge base, keep `branchedAtTurn` (core's `promotedChild` for a root).
 */
export function lineageSql(s: string): string {
  return `
ALTER TABLE ${s}.sessions
  ADD COLUMN history_rewrites bigint NOT NULL DEFAULT 0,
  ADD COLUMN merge_base jsonb;

CREATE FUNCTION ${s}.sk_count_ok(v bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $fn$ SELECT v BETWEEN 0 AND ${MAX_COUNT} $fn$;

-- c + inc is finite and >= 0 in IEEE double arithmetic (what JavaScript computes). The sum
-- of two finite doubles overflows exactly when it is at least MAX + 2^970; that needs
-- both terms >= 2^969, where halving is exact, and then the halved sum reaches 2^1023
-- exactly when the full one overflows. No step can raise PostgreSQL's float errors.
CREATE FUNCTION ${s}.sk_cost_ok(c double precision, inc double precision) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $fn$
SELECT CASE
  WHEN inc IS NULL OR inc = 0 THEN true
  WHEN inc < 0 THEN c + inc >= 0
  WHEN c < '2'::float8 ^ 969 OR inc < '2'::float8 ^ 969 THEN true
  ELSE c / 2 + inc / 2 < '2'::float8 ^ 1023
END $fn$;

DROP FUNCTION ${s}.sk_commit(text, bigint, integer, boolean, text[], integer[], text[], timestamptz,
  text, text, text, text, text, text, bigint, double precision, bigint, boolean, jsonb, text[],
  boolean, text, boolean, timestamptz, boolean, text, bigint, double precision, bigint, boolean);

CREATE FUNCTION ${s}.sk_commit(
  p_id text, p_expected_rev bigint, p_expected_count integer, p_replace boolean,
  p_bodies text[], p_search_seq integer[], p_search text[], p_now timestamptz,
  p_title text, p_title_lc text, p_folder text, p_status text, p_model text, p_provider text,
  p_token_count bigint, p_cost double precision, p_turn_count bigint,
  p_meta_replace boolean, p_meta_set jsonb, p_meta_del text[],
  p_state_set boolean, p_state text, p_archived_set boolean, p_archived timestamptz,
  p_mode_set boolean, p_mode text,
  p_inc_tokens bigint, p_inc_cost double precision, p_inc_turns bigint,
  p_want_header boolean, p_rewrite boolean,
  OUT code text, OUT revision bigint, OUT message_count integer, OUT updated_at timestamptz,
  OUT created_at timestamptz, OUT parent_id text, OUT branched_at_turn integer,
  OUT children text[], OUT token_count bigint, OUT cost_usd double precision,
  OUT turn_count bigint
) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  n integer := coalesce(cardinality(p_bodies), 0);
  base integer;
BEGIN
  UPDATE ${s}.sessions AS s SET
    title = coalesce(p_title, s.title),
    folder = coalesce(p_folder, s.folder),
    status = coalesce(p_status, s.status),
    model = coalesce(p_model, s.model),
    provider = coalesce(p_provider, s.provider),
    token_count = coalesce(p_token_count, s.token_count) + coalesce(p_inc_tokens, 0),
    cost_usd = CASE WHEN coalesce(p_inc_cost, 0) = 0 THEN coalesce(p_cost, s.cost_usd)
      ELSE coalesce(p_cost, s.cost_usd) + p_inc_cost END,
    turn_count = coalesce(p_turn_count, s.turn_count) + coalesce(p_inc_turns, 0),
    metadata = CASE WHEN p_meta_replace THEN coalesce(p_meta_set, '{}'::jsonb)
      WHEN p_meta_set IS NULL AND p_meta_del IS NULL THEN s.metadata
      ELSE (s.metadata || coalesce(p_meta_set, '{}'::jsonb)) - coalesce(p_meta_del, '{}'::text[]) END,
    state = CASE WHEN p_state_set THEN p_state ELSE s.state END,
    archived_at = CASE WHEN p_archived_set THEN p_archived ELSE s.archived_at END,
    mode = CASE WHEN p_mode_set THEN p_mode ELSE s.mode END,
    message_count = CASE WHEN p_replace THEN n ELSE s.message_count + n END,
    history_rewrites = s.history_rewrites + CASE WHEN p_rewrite THEN 1 ELSE 0 END,
    revision = s.revision + 1,
    updated_at = greatest(p_now, s.updated_at + interval '1 millisecond')
  WHERE s.id = p_id
    AND (p_expected_rev IS NULL OR s.revision = p_expected_rev)
    AND (p_expected_count IS NULL OR s.message_count = p_expected_count)
    AND ${s}.sk_count_ok(coalesce(p_token_count, s.token_count) + coalesce(p_inc_tokens, 0))
    AND ${s}.sk_count_ok(coalesce(p_turn_count, s.turn_count) + coalesce(p_inc_turns, 0))
    AND ${s}.sk_cost_ok(coalesce(p_cost, s.cost_usd), p_inc_cost)
  RETURNING s.revision, s.message_count, s.updated_at, s.created_at, s.parent_id,
    s.branched_at_turn
  INTO revision, message_count, updated_at, created_at, parent_id, branched_at_turn;
  IF NOT FOUND THEN
    SELECT s.revision, s.message_count, s.token_count, s.cost_usd, s.turn_count
      INTO revision, message_count, token_count, cost_usd, turn_count
      FROM ${s}.sessions AS s WHERE s.id = p_id;
    IF NOT FOUND THEN
      code := 'not_found';
    ELSIF p_expected_rev IS NOT NULL AND revision <> p_expected_rev THEN
      code := 'conflict_revision';
    ELSIF p_expected_count IS NOT NULL AND message_count <> p_expected_count THEN
      code := 'conflict_count';
    ELSE
      code := 'out_of_range';
    END IF;
    RETURN;
  END IF;
  code := 'ok';
  base := message_count - n;
  IF p_replace THEN
    DELETE FROM ${s}.messages AS m WHERE m.session_id = p_id;
    DELETE FROM ${s}.search_rows AS x WHERE x.session_id = p_id AND x.seq >= 0;
  END IF;
  IF n > 0 THEN
    INSERT INTO ${s}.messages (session_id, seq, body)
      SELECT p_id, base + u.o::integer - 1, u.b FROM unnest(p_bodies) WITH ORDINALITY AS u(b, o);
  END IF;
  IF cardinality(p_search) > 0 THEN
    INSERT INTO ${s}.search_rows (session_id, seq, text)
      SELECT p_id, base + u.o, u.t FROM unnest(p_search_seq, p_search) AS u(o, t);
  END IF;
  IF p_title_lc IS NOT NULL THEN
    DELETE FROM ${s}.search_rows AS x WHERE x.session_id = p_id AND x.seq = -1;
    IF p_title_lc <> '' THEN
      INSERT INTO ${s}.search_rows (session_id, seq, text) VALUES (p_id, -1, p_title_lc);
    END IF;
  END IF;
  IF p_want_header THEN
    children := ARRAY(SELECT c.id::text FROM ${s}.sessions AS c
      WHERE c.parent_id = p_id ORDER BY c.id);
  END IF;
END
$fn$;

DROP FUNCTION ${s}.sk_append(text, bigint, integer, text[], integer[], text[], timestamptz, bigint,
  double precision, bigint);

CREATE FUNCTION ${s}.sk_append(
  p_id text, p_expected_rev bigint, p_expected_count integer,
  p_bodies text[], p_search_seq integer[], p_search text[], p_now timestamptz,
  p_inc_tokens bigint, p_inc_cost double precision, p_inc_turns bigint,
  OUT code text, OUT revision bigint, OUT message_count integer, OUT updated_at timestamptz,
  OUT token_count bigint, OUT cost_usd double precision, OUT turn_count bigint
) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  n integer := coalesce(cardinality(p_bodies), 0);
BEGIN
  UPDATE ${s}.sessions AS s SET
    token_count = s.token_count + coalesce(p_inc_tokens, 0),
    cost_usd = CASE WHEN coalesce(p_inc_cost, 0) = 0 THEN s.cost_usd
      ELSE s.cost_usd + p_inc_cost END,
    turn_count = s.turn_count + coalesce(p_inc_turns, 0),
    message_count = s.message_count + n,
    revision = s.revision + 1,
    updated_at = greatest(p_now, s.updated_at + interval '1 millisecond')
  WHERE s.id = p_id
    AND (p_expected_rev IS NULL OR s.revision = p_expected_rev)
    AND (p_expected_count IS NULL OR s.message_count = p_expected_count)
    AND (p_inc_tokens IS NULL OR ${s}.sk_count_ok(s.token_count + p_inc_tokens))
    AND (p_inc_turns IS NULL OR ${s}.sk_count_ok(s.turn_count + p_inc_turns))
    AND ${s}.sk_cost_ok(s.cost_usd, p_inc_cost)
  RETURNING s.revision, s.message_count, s.updated_at INTO revision, message_count, updated_at;
  IF NOT FOUND THEN
    SELECT s.revision, s.message_count, s.token_count, s.cost_usd, s.turn_count
      INTO revision, message_count, token_count, cost_usd, turn_count
      FROM ${s}.sessions AS s WHERE s.id = p_id;
    IF NOT FOUND THEN
      code := 'not_found';
    ELSIF p_expected_rev IS NOT NULL AND revision <> p_expected_rev THEN
      code := 'conflict_revision';
    ELSIF p_expected_count IS NOT NULL AND message_count <> p_expected_count THEN
      code := 'conflict_count';
    ELSE
      code := 'out_of_range';
    END IF;
    RETURN;
  END IF;
  code := 'ok';
  IF n > 0 THEN
    INSERT INTO ${s}.messages (session_id, seq, body)
      SELECT p_id, message_count - n + u.o::integer - 1, u.b
      FROM unnest(p_bodies) WITH ORDINALITY AS u(b, o);
  END IF;
  IF cardinality(p_search) > 0 THEN
    INSERT INTO ${s}.search_rows (session_id, seq, text)
      SELECT p_id, message_count - n + u.o, u.t FROM unnest(p_search_seq, p_search) AS u(o, t);
  END IF;
END
$fn$;

DROP FUNCTION ${s}.sk_delete(text);

-- The locking half of delete: the parent first (FOR KEY SHARE: commits to it still run),
-- then the session (FOR UPDATE) — the parent → child order every writer that re-parents
-- or merges takes — re-checking the parent under the lock (a concurrent delete of the
-- parent may have promoted this session meanwhile: start over). A parent that does not
-- exist is no obstacle. Returns the session's lineage for the client's promotion step;
-- is_found = false when the session does not exist.
CREATE FUNCTION ${s}.sk_delete_lock(
  p_id text, OUT is_found boolean, OUT parent_id text, OUT branched_at_turn integer,
  OUT history_rewrites bigint, OUT merge_base jsonb
) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_parent text;
  v_now text;
BEGIN
  FOR attempt IN 1..100 LOOP
    SELECT s.parent_id INTO v_parent FROM ${s}.sessions AS s WHERE s.id = p_id;
    IF NOT FOUND THEN
      is_found := false;
      RETURN;
    END IF;
    IF v_parent IS NOT NULL AND v_parent <> p_id THEN
      PERFORM 1 FROM ${s}.sessions AS s WHERE s.id = v_parent FOR KEY SHARE;
    END IF;
    SELECT s.parent_id, s.branched_at_turn, s.history_rewrites, s.merge_base
      INTO v_now, branched_at_turn, history_rewrites, merge_base
      FROM ${s}.sessions AS s WHERE s.id = p_id FOR UPDATE;
    IF NOT FOUND THEN
      is_found := false;
      RETURN;
    END IF;
    IF v_now IS NOT DISTINCT FROM v_parent THEN
      is_found := true;
      parent_id := v_now;
      RETURN;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'sk_delete_lock: the parent of % keeps changing', p_id USING ERRCODE = '40001';
END
$fn$;

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
  -- core's promotedChild for a deleted root: no parent, no merge base, branchedAtTurn
  -- and rewrites kept (test: "enforceMax promotions equal promotedChild").
  UPDATE ${s}.sessions AS c SET parent_id = NULL, merge_base = NULL
    WHERE c.parent_id = ANY (victims) AND NOT (c.id = ANY (victims));
  DELETE FROM ${s}.follows AS f WHERE f.target = ANY (victims);
  DELETE FROM ${s}.messages AS m WHERE m.session_id = ANY (victims);
  DELETE FROM ${s}.search_rows AS x WHERE x.session_id = ANY (victims);
  DELETE FROM ${s}.sessions AS s WHERE s.id = ANY (victims);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END
$fn$;
`;
}

/** Version 4 of the schema (see `lineageSql`); its JS step rewrites every search row. */
export const migration004: Migration = {
  version: 4,
  name: 'lineage_counter_checks_search_separator',
  sql: lineageSql,
  /** Search rows in the version 4 format (see search-rows.ts), from the stored messages. */
  run: (client: PoolClient, s: string): Promise<void> => rebuildAllSearchRows(client, s),
};
