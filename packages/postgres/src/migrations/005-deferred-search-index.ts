// Schema version 5: search indexing moved off the turn's transaction. A turn's search rows
// go to `search_pending` (a child of `search_rows` without the trigram index); the store
// moves them into `search_rows` in batches afterwards (search-indexer.ts). `settings`
// records what the schema's search covers (search-scope.ts).
import type { Migration } from './migration.js';

/**
 * SQL of version 5, given the quoted schema name `s`:
 * - `search_pending`: inherits `search_rows` (same columns; every statement on
 *   `search_rows` — search, delete, repair, merge's copy — sees its rows too), its own
 *   primary key, no trigram index: inserting a turn's text costs one heap row and one
 *   B-tree entry. Search scans it (it holds only what has not been indexed yet).
 * - `settings`: `search` = `messages` (title and message text), `titles` or `none`.
 * - the trigram index (when present): `gin_pending_list_limit` 64 kB.
 * - `sk_commit` / `sk_append`: the same signatures and results as version 4; the search
 *   rows of new messages go to `search_pending`.
 */
export function deferredSearchSql(s: string): string {
  return `
CREATE TABLE ${s}.search_pending () INHERITS (${s}.search_rows);
ALTER TABLE ${s}.search_pending ADD PRIMARY KEY (session_id, seq);

CREATE TABLE ${s}.settings (
  name text PRIMARY KEY,
  value text NOT NULL
);
INSERT INTO ${s}.settings (name, value) VALUES ('search', 'messages');

-- The trigram index of an existing schema (created after the migrations, trigram.ts):
-- a 64 kB pending list, merged often by the indexer's inserts.
ALTER INDEX IF EXISTS ${s}.search_rows_trgm SET (gin_pending_list_limit = 64);

CREATE OR REPLACE FUNCTION ${s}.sk_commit(
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
    INSERT INTO ${s}.search_pending (session_id, seq, text)
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

CREATE OR REPLACE FUNCTION ${s}.sk_append(
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
    INSERT INTO ${s}.search_pending (session_id, seq, text)
      SELECT p_id, message_count - n + u.o, u.t FROM unnest(p_search_seq, p_search) AS u(o, t);
  END IF;
END
$fn$;

`;
}

/**
 * Version 5 of the schema (see `deferredSearchSql`). Search rows keep the version 4 format,
 * so nothing is rewritten: rows already stored stay in `search_rows` (indexed).
 */
export const migration005: Migration = {
  version: 5,
  name: 'deferred_search_index',
  sql: deferredSearchSql,
};
