// Schema version 6: search text indexed by block (see search-index-plan.ts), the turn as
// one plain statement (statements/commit.ts), and search rows whose validity the session
// row decides, so no search work ever locks a session or waits on a turn.
import type { PoolClient } from 'pg';
import type { Migration } from './migration.js';
import { convertV5SearchRows } from './v5-search-rows.js';

/**
 * SQL of version 6, given the quoted schema name `s`:
 * - `sessions.search_epoch` (from the sequence `search_epochs`, unique across the schema;
 *   sessions stored before share 0, so an id created again never revives rows of its
 *   first life): the search rows of a session count only while their `epoch` equals it.
 *   A write that replaces the history takes a new one; rows of the old epoch are deleted
 *   where no indexer holds them and are ignored by search until then.
 * - `sessions.title_search`: the title as search reads it (lower-cased in JavaScript;
 *   `''` under search scope `none`), written with the title.
 * - `search_pending` (replacing version 5's): the text a write adds, one row per commit
 *   chunk (`seq … next_seq - 1`; `seq = -1` for a title), no trigram work, never
 *   compressed in the turn (`toast_tuple_target` 8160). The indexer deletes what it moves.
 * - `search_chunks`: the text of consecutive messages, about 64 KB per row, lz4 where the
 *   server has it; `search_words`: the words of each block of 1,024 messages (block -1:
 *   the title), each word once per block, with the trigram index (trigram.ts).
 * - `sk_commit` replaced (same parameters plus `p_search_next`); `sk_append` dropped: a
 *   patch-free turn is one statement (statements/commit.ts); `sk_enforce_max` deletes from
 *   the new tables.
 * Version 5's rows are converted by `convertV5SearchRows` (the JavaScript step), which
 * then drops the old tables.
 */
export function searchBlocksSql(s: string): string {
  return `
CREATE SEQUENCE ${s}.search_epochs START 1;
-- Constant defaults: no table rewrite. Sessions stored before share epoch 0; every new
-- session and every rewrite takes the next value, so an id created again never meets it.
ALTER TABLE ${s}.sessions
  ADD COLUMN title_search text NOT NULL DEFAULT '',
  ADD COLUMN search_epoch bigint NOT NULL DEFAULT 0;
ALTER TABLE ${s}.sessions
  ALTER COLUMN search_epoch SET DEFAULT nextval('${s}.search_epochs'::regclass);
UPDATE ${s}.sessions AS x SET title_search = r.text
  FROM ONLY ${s}.search_rows AS r WHERE r.session_id = x.id AND r.seq = -1;

ALTER TABLE ${s}.search_rows RENAME TO search_rows_v5;
ALTER TABLE ${s}.search_pending RENAME TO search_pending_v5;
DROP INDEX IF EXISTS ${s}.search_rows_trgm;

CREATE TABLE ${s}.search_pending (
  session_id text COLLATE "C" NOT NULL,
  seq integer NOT NULL,
  next_seq integer NOT NULL,
  epoch bigint NOT NULL,
  text text NOT NULL
) WITH (toast_tuple_target = 8160, autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 2000, autovacuum_vacuum_insert_scale_factor = 0,
  autovacuum_vacuum_insert_threshold = 2000);
CREATE INDEX search_pending_session ON ${s}.search_pending (session_id, seq);

CREATE TABLE ${s}.search_chunks (
  session_id text COLLATE "C" NOT NULL,
  epoch bigint NOT NULL,
  first_seq integer NOT NULL,
  end_seq integer NOT NULL,
  text text NOT NULL,
  PRIMARY KEY (session_id, epoch, first_seq)
);
-- lz4 compresses a chunk several times faster than pglz; PostgreSQL 13, or a server built
-- without lz4, keeps pglz.
DO $do$ BEGIN
  EXECUTE 'ALTER TABLE ${s.replaceAll("'", "''")}.search_chunks ALTER COLUMN text SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN NULL;
END $do$;

CREATE TABLE ${s}.search_words (
  session_id text COLLATE "C" NOT NULL,
  epoch bigint NOT NULL,
  block integer NOT NULL,
  words text NOT NULL
);
CREATE INDEX search_words_block ON ${s}.search_words (session_id, epoch, block);

DROP FUNCTION ${s}.sk_append(text, bigint, integer, text[], integer[], text[], timestamptz, bigint,
  double precision, bigint);
DROP FUNCTION ${s}.sk_commit(text, bigint, integer, boolean, text[], integer[], text[], timestamptz,
  text, text, text, text, text, text, bigint, double precision, bigint, boolean, jsonb, text[],
  boolean, text, boolean, timestamptz, boolean, text, bigint, double precision, bigint, boolean,
  boolean);
${commitFunctionSql(s)}
${enforceMaxSql(s)}
`;
}

/**
 * `sk_commit` of version 6: version 4's function (the guarded UPDATE, counters checked in
 * the database, result codes) writing version 6's search rows. A replace takes a new
 * search epoch and deletes the rows of every other epoch (pending rows only where no
 * indexer holds them, `SKIP LOCKED`: it never waits on one; search ignores the rest); a
 * title patch writes `title_search` and a pending title row. Search rows are only ever
 * deleted by writers of their session (under its row lock) or with `SKIP LOCKED`, so
 * these deletes wait on nobody.
 */
function commitFunctionSql(s: string): string {
  return `
CREATE FUNCTION ${s}.sk_commit(
  p_id text, p_expected_rev bigint, p_expected_count integer, p_replace boolean,
  p_bodies text[], p_search_seq integer[], p_search_next integer[], p_search text[],
  p_now timestamptz,
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
  v_epoch bigint;
BEGIN
  UPDATE ${s}.sessions AS s SET
    title = coalesce(p_title, s.title),
    title_search = coalesce(p_title_lc, s.title_search),
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
    search_epoch = CASE WHEN p_replace THEN nextval('${s}.search_epochs'::regclass)
      ELSE s.search_epoch END,
    revision = s.revision + 1,
    updated_at = greatest(p_now, s.updated_at + interval '1 millisecond')
  WHERE s.id = p_id
    AND (p_expected_rev IS NULL OR s.revision = p_expected_rev)
    AND (p_expected_count IS NULL OR s.message_count = p_expected_count)
    AND ${s}.sk_count_ok(coalesce(p_token_count, s.token_count) + coalesce(p_inc_tokens, 0))
    AND ${s}.sk_count_ok(coalesce(p_turn_count, s.turn_count) + coalesce(p_inc_turns, 0))
    AND ${s}.sk_cost_ok(coalesce(p_cost, s.cost_usd), p_inc_cost)
  RETURNING s.revision, s.message_count, s.updated_at, s.created_at, s.parent_id,
    s.branched_at_turn, s.search_epoch
  INTO revision, message_count, updated_at, created_at, parent_id, branched_at_turn, v_epoch;
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
    DELETE FROM ${s}.search_chunks AS k WHERE k.session_id = p_id AND k.epoch <> v_epoch;
    DELETE FROM ${s}.search_words AS w
      WHERE w.session_id = p_id AND w.epoch <> v_epoch AND w.block >= 0;
    DELETE FROM ${s}.search_pending AS p WHERE p.ctid = ANY (ARRAY(
      SELECT q.ctid FROM ${s}.search_pending AS q
      WHERE q.session_id = p_id AND q.seq >= 0 AND q.epoch <> v_epoch FOR UPDATE SKIP LOCKED));
  END IF;
  IF n > 0 THEN
    INSERT INTO ${s}.messages (session_id, seq, body)
      SELECT p_id, base + u.o::integer - 1, u.b FROM unnest(p_bodies) WITH ORDINALITY AS u(b, o);
  END IF;
  IF cardinality(p_search) > 0 THEN
    INSERT INTO ${s}.search_pending (session_id, seq, next_seq, epoch, text)
      SELECT p_id, base + u.o, base + u.e, v_epoch, u.t
      FROM unnest(p_search_seq, p_search_next, p_search) AS u(o, e, t);
  END IF;
  IF p_title_lc IS NOT NULL THEN
    DELETE FROM ${s}.search_words AS w WHERE w.session_id = p_id AND w.block = -1;
    DELETE FROM ${s}.search_pending AS p WHERE p.ctid = ANY (ARRAY(
      SELECT q.ctid FROM ${s}.search_pending AS q
      WHERE q.session_id = p_id AND q.seq = -1 FOR UPDATE SKIP LOCKED));
    IF p_title_lc <> '' THEN
      INSERT INTO ${s}.search_pending (session_id, seq, next_seq, epoch, text)
        VALUES (p_id, -1, -1, v_epoch, p_title_lc);
    END IF;
  END IF;
  IF p_want_header THEN
    children := ARRAY(SELECT c.id::text FROM ${s}.sessions AS c
      WHERE c.parent_id = p_id ORDER BY c.id);
  END IF;
END
$fn$;`;
}

/** `sk_enforce_max` of version 4 deleting version 6's search rows (version 7 replaces it). */
function enforceMaxSql(s: string): string {
  return `
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
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END
$fn$;`;
}

/** Version 6 of the schema (see `searchBlocksSql`); its JavaScript step converts version 5's rows. */
export const migration006: Migration = {
  version: 6,
  name: 'search_blocks',
  sql: searchBlocksSql,
  run: (client: PoolClient, s: string): Promise<void> => convertV5SearchRows(client, s),
};
