// Schema version 8: operation ids (a commit named by one is recorded in the same
// transaction as its write, and a repeat resolves with the first result) and `truncate`
// (keep the first n messages, drop the rest, append, in one step).
import type { Migration } from './migration.js';

/** How many operation ids a session remembers (core's MAX_REMEMBERED_OPERATIONS). */
export const REMEMBERED_OPERATIONS = 1000;

/**
 * SQL of version 8, given the quoted schema name `s`:
 * - `operations`: one row per remembered operation id of a session, keyed by
 *   `(session_id, operation_id)` (the replay check is one index probe), with the result the
 *   commit got and its ordinal `n` among the session's named commits. Deleted with their
 *   session (cascade), so an id created again starts with no operations.
 * - `sessions.operation_count`: how many named commits the session has had; recording the
 *   `n`-th deletes the row `n - 1000` by its unique `(session_id, n)` key, so a session
 *   remembers exactly its last 1,000 ids at O(1) cost per commit.
 * - `sk_commit` replaced: version 6's function plus `p_keep` (truncate: delete the message
 *   rows from `p_keep` on and the current search rows that hold any of them, then append
 *   at `p_keep`) and `p_op_id` (record the operation with the result, in the same
 *   statement). The caller decides replays and expectations before it calls (the kit's
 *   `planCommit`, under the session's row lock); the function still guards the revision.
 */
export function operationsSql(s: string): string {
  return `
CREATE TABLE ${s}.operations (
  session_id text COLLATE "C" NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
  operation_id text COLLATE "C" NOT NULL,
  n bigint NOT NULL,
  revision bigint NOT NULL,
  message_count integer NOT NULL,
  updated_at timestamptz(3) NOT NULL,
  PRIMARY KEY (session_id, operation_id)
);
CREATE UNIQUE INDEX operations_ordinal ON ${s}.operations (session_id, n);
-- A constant default: no table rewrite.
ALTER TABLE ${s}.sessions ADD COLUMN operation_count bigint NOT NULL DEFAULT 0;

DROP FUNCTION ${s}.sk_commit(text, bigint, integer, boolean, text[], integer[], integer[], text[],
  timestamptz, text, text, text, text, text, text, bigint, double precision, bigint, boolean,
  jsonb, text[], boolean, text, boolean, timestamptz, boolean, text, bigint, double precision,
  bigint, boolean, boolean);
${commitFunctionSql(s)}
`;
}

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
  p_want_header boolean, p_rewrite boolean, p_keep integer, p_op_id text,
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
  v_ops bigint;
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
    message_count = CASE WHEN p_replace THEN n WHEN p_keep IS NOT NULL THEN p_keep + n
      ELSE s.message_count + n END,
    history_rewrites = s.history_rewrites + CASE WHEN p_rewrite THEN 1 ELSE 0 END,
    search_epoch = CASE WHEN p_replace THEN nextval('${s}.search_epochs'::regclass)
      ELSE s.search_epoch END,
    operation_count = s.operation_count + CASE WHEN p_op_id IS NULL THEN 0 ELSE 1 END,
    revision = s.revision + 1,
    updated_at = greatest(p_now, s.updated_at + interval '1 millisecond')
  WHERE s.id = p_id
    AND (p_expected_rev IS NULL OR s.revision = p_expected_rev)
    AND (p_expected_count IS NULL OR s.message_count = p_expected_count)
    AND (p_keep IS NULL OR p_keep <= s.message_count)
    AND ${s}.sk_count_ok(coalesce(p_token_count, s.token_count) + coalesce(p_inc_tokens, 0))
    AND ${s}.sk_count_ok(coalesce(p_turn_count, s.turn_count) + coalesce(p_inc_turns, 0))
    AND ${s}.sk_cost_ok(coalesce(p_cost, s.cost_usd), p_inc_cost)
  RETURNING s.revision, s.message_count, s.updated_at, s.created_at, s.parent_id,
    s.branched_at_turn, s.search_epoch, s.operation_count
  INTO revision, message_count, updated_at, created_at, parent_id, branched_at_turn, v_epoch,
    v_ops;
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
  ELSIF p_keep IS NOT NULL THEN
    -- Truncate: the dropped rows and the search rows holding any dropped message (the
    -- caller locked this epoch's pending rows first and rewrites the kept part of a
    -- search row it cuts). Words rows stay: they only ever narrow a search to candidates.
    DELETE FROM ${s}.messages AS m WHERE m.session_id = p_id AND m.seq >= p_keep;
    DELETE FROM ${s}.search_chunks AS k
      WHERE k.session_id = p_id AND k.epoch = v_epoch AND k.end_seq > p_keep;
    DELETE FROM ${s}.search_pending AS p
      WHERE p.session_id = p_id AND p.epoch = v_epoch AND p.seq >= 0 AND p.next_seq > p_keep;
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
  IF p_op_id IS NOT NULL THEN
    INSERT INTO ${s}.operations (session_id, operation_id, n, revision, message_count, updated_at)
      VALUES (p_id, p_op_id, v_ops, revision, message_count, updated_at);
    DELETE FROM ${s}.operations AS o
      WHERE o.session_id = p_id AND o.n = v_ops - ${REMEMBERED_OPERATIONS};
  END IF;
  IF p_want_header THEN
    children := ARRAY(SELECT c.id::text FROM ${s}.sessions AS c
      WHERE c.parent_id = p_id ORDER BY c.id);
  END IF;
END
$fn$;`;
}

/** Version 8 of the schema (see `operationsSql`). */
export const migration008: Migration = {
  version: 8,
  name: 'operations_truncate',
  sql: operationsSql,
};
