// Schema version 1: the tables, indexes and the server-side functions sk_commit, sk_append,
// sk_delete and sk_enforce_max. Released: never edit (databases record that they ran it).
import type { Migration } from './migration.js';

/**
 * Layout (one row per message; bodies are JSON text, never jsonb: jsonb cannot hold
 * `\u0000` and reorders keys):
 * - `sessions`: the header of each session plus derived `message_count`; ids and the
 *   filter columns are `COLLATE "C"` so ties break in byte order.
 * - `messages`: `(session_id, seq)` → `body`. A commit INSERTs its new rows.
 * - `search_rows`: lower-cased searchable text in chunks: one row per commit (since
 *   version 4: each message's text as core's `searchTextOf` writes it, separator first,
 *   at most ~64 KB, keyed by the seq of the chunk's first message; see search-rows.ts)
 *   plus the title at `seq = -1`.
 *   Listing and search read only `sessions` and this table.
 * - `runtime_status`, `events`, `bindings`, `follows`.
 * - `sk_commit`, `sk_delete`, `sk_enforce_max`: the turn write, the delete with child
 *   promotion and the retention pass, each one round trip and one transaction.
 */
export const migration001: Migration = {
  version: 1,
  name: 'initial',
  sql: (s) => `
CREATE TABLE ${s}.sessions (
  id text COLLATE "C" PRIMARY KEY,
  title text NOT NULL DEFAULT '',
  folder text COLLATE "C" NOT NULL DEFAULT '',
  parent_id text COLLATE "C",
  created_at timestamptz(3) NOT NULL,
  updated_at timestamptz(3) NOT NULL,
  model text NOT NULL DEFAULT '',
  provider text NOT NULL DEFAULT '',
  token_count bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  turn_count bigint NOT NULL DEFAULT 0,
  metadata jsonb NOT NULL DEFAULT '{}',
  status text COLLATE "C" NOT NULL DEFAULT 'active',
  branched_at_turn integer,
  revision bigint NOT NULL DEFAULT 1,
  archived_at timestamptz(3),
  mode text,
  state text,
  message_count integer NOT NULL DEFAULT 0,
  last_event_seq bigint NOT NULL DEFAULT 0
);
CREATE INDEX sessions_order ON ${s}.sessions (updated_at, id);
CREATE INDEX sessions_live_order ON ${s}.sessions (updated_at, id) WHERE archived_at IS NULL;
CREATE INDEX sessions_folder ON ${s}.sessions (folder, updated_at, id);
CREATE INDEX sessions_status ON ${s}.sessions (status, updated_at, id);
CREATE INDEX sessions_parent ON ${s}.sessions (parent_id, updated_at, id);
CREATE INDEX sessions_roots ON ${s}.sessions (updated_at, id) WHERE parent_id IS NULL;

-- messages and search_rows carry no foreign key (a per-row trigger on the hottest insert
-- path): every writer inserts them only after locking or inserting the session row, and
-- sk_delete / sk_enforce_max delete them explicitly.
CREATE TABLE ${s}.messages (
  session_id text COLLATE "C" NOT NULL,
  seq integer NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (session_id, seq)
);

CREATE TABLE ${s}.search_rows (
  session_id text COLLATE "C" NOT NULL,
  seq integer NOT NULL,
  text text NOT NULL,
  PRIMARY KEY (session_id, seq)
);

CREATE TABLE ${s}.runtime_status (
  session_id text COLLATE "C" PRIMARY KEY REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
  status text NOT NULL
);

CREATE TABLE ${s}.events (
  session_id text COLLATE "C" NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  revision bigint NOT NULL,
  at timestamptz(3) NOT NULL,
  type text NOT NULL,
  payload text NOT NULL,
  PRIMARY KEY (session_id, seq)
);

CREATE TABLE ${s}.bindings (
  channel text COLLATE "C" NOT NULL,
  chat_key text COLLATE "C" NOT NULL,
  thread text COLLATE "C" NOT NULL,
  session_id text COLLATE "C" NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
  updated_at timestamptz(3) NOT NULL,
  PRIMARY KEY (channel, chat_key, thread)
);
CREATE INDEX bindings_recent ON ${s}.bindings (updated_at, channel, chat_key, thread);
CREATE INDEX bindings_session ON ${s}.bindings (session_id);

CREATE TABLE ${s}.follows (
  channel text COLLATE "C" NOT NULL,
  chat_key text COLLATE "C" NOT NULL,
  target text COLLATE "C" NOT NULL,
  PRIMARY KEY (channel, chat_key)
);
CREATE INDEX follows_target ON ${s}.follows (target);

-- The turn write (commit, and save as a full replace): one UPDATE guarded by the
-- expectations, then INSERTs of the new rows only. Reports a code instead of raising so
-- the client maps it to conflict / not_found without a second round trip.
-- p_search_seq/p_search: search chunks (offsets relative to the first new message).
CREATE FUNCTION ${s}.sk_commit(
  p_id text, p_expected_rev bigint, p_expected_count integer, p_replace boolean,
  p_bodies text[], p_search_seq integer[], p_search text[], p_now timestamptz,
  p_title text, p_title_lc text, p_folder text, p_status text, p_model text, p_provider text,
  p_token_count bigint, p_cost double precision, p_turn_count bigint,
  p_meta_replace boolean, p_meta_set jsonb, p_meta_del text[],
  p_state_set boolean, p_state text, p_archived_set boolean, p_archived timestamptz,
  p_mode_set boolean, p_mode text,
  p_inc_tokens bigint, p_inc_cost double precision, p_inc_turns bigint,
  p_want_header boolean,
  OUT code text, OUT revision bigint, OUT message_count integer, OUT updated_at timestamptz,
  OUT created_at timestamptz, OUT parent_id text, OUT branched_at_turn integer,
  OUT children text[]
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
    token_count = CASE WHEN coalesce(p_inc_tokens, 0) = 0 THEN coalesce(p_token_count, s.token_count)
      ELSE greatest(0, coalesce(p_token_count, s.token_count) + p_inc_tokens) END,
    cost_usd = CASE WHEN coalesce(p_inc_cost, 0) = 0 THEN coalesce(p_cost, s.cost_usd)
      ELSE greatest(0, coalesce(p_cost, s.cost_usd) + p_inc_cost) END,
    turn_count = CASE WHEN coalesce(p_inc_turns, 0) = 0 THEN coalesce(p_turn_count, s.turn_count)
      ELSE greatest(0, coalesce(p_turn_count, s.turn_count) + p_inc_turns) END,
    metadata = CASE WHEN p_meta_replace THEN coalesce(p_meta_set, '{}'::jsonb)
      WHEN p_meta_set IS NULL AND p_meta_del IS NULL THEN s.metadata
      ELSE (s.metadata || coalesce(p_meta_set, '{}'::jsonb)) - coalesce(p_meta_del, '{}'::text[]) END,
    state = CASE WHEN p_state_set THEN p_state ELSE s.state END,
    archived_at = CASE WHEN p_archived_set THEN p_archived ELSE s.archived_at END,
    mode = CASE WHEN p_mode_set THEN p_mode ELSE s.mode END,
    message_count = CASE WHEN p_replace THEN n ELSE s.message_count + n END,
    revision = s.revision + 1,
    updated_at = greatest(p_now, s.updated_at + interval '1 millisecond')
  WHERE s.id = p_id
    AND (p_expected_rev IS NULL OR s.revision = p_expected_rev)
    AND (p_expected_count IS NULL OR s.message_count = p_expected_count)
  RETURNING s.revision, s.message_count, s.updated_at, s.created_at, s.parent_id,
    s.branched_at_turn
  INTO revision, message_count, updated_at, created_at, parent_id, branched_at_turn;
  IF NOT FOUND THEN
    SELECT s.revision, s.message_count INTO revision, message_count
      FROM ${s}.sessions AS s WHERE s.id = p_id;
    IF NOT FOUND THEN
      code := 'not_found';
    ELSIF p_expected_rev IS NOT NULL AND revision <> p_expected_rev THEN
      code := 'conflict_revision';
    ELSE
      code := 'conflict_count';
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

-- The common turn: append messages (and bump counters) without a patch. The same
-- guarded UPDATE as sk_commit with only the columns a turn changes: fewer parameters and
-- less work on the hottest path.
CREATE FUNCTION ${s}.sk_append(
  p_id text, p_expected_rev bigint, p_expected_count integer,
  p_bodies text[], p_search_seq integer[], p_search text[], p_now timestamptz,
  p_inc_tokens bigint, p_inc_cost double precision, p_inc_turns bigint,
  OUT code text, OUT revision bigint, OUT message_count integer, OUT updated_at timestamptz
) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  n integer := coalesce(cardinality(p_bodies), 0);
BEGIN
  UPDATE ${s}.sessions AS s SET
    token_count = CASE WHEN coalesce(p_inc_tokens, 0) = 0 THEN s.token_count
      ELSE greatest(0, s.token_count + p_inc_tokens) END,
    cost_usd = CASE WHEN coalesce(p_inc_cost, 0) = 0 THEN s.cost_usd
      ELSE greatest(0, s.cost_usd + p_inc_cost) END,
    turn_count = CASE WHEN coalesce(p_inc_turns, 0) = 0 THEN s.turn_count
      ELSE greatest(0, s.turn_count + p_inc_turns) END,
    message_count = s.message_count + n,
    revision = s.revision + 1,
    updated_at = greatest(p_now, s.updated_at + interval '1 millisecond')
  WHERE s.id = p_id
    AND (p_expected_rev IS NULL OR s.revision = p_expected_rev)
    AND (p_expected_count IS NULL OR s.message_count = p_expected_count)
  RETURNING s.revision, s.message_count, s.updated_at INTO revision, message_count, updated_at;
  IF NOT FOUND THEN
    SELECT s.revision, s.message_count INTO revision, message_count
      FROM ${s}.sessions AS s WHERE s.id = p_id;
    IF NOT FOUND THEN
      code := 'not_found';
    ELSIF p_expected_rev IS NOT NULL AND revision <> p_expected_rev THEN
      code := 'conflict_revision';
    ELSE
      code := 'conflict_count';
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

-- Delete with promotion: lock the row first, so a branch that is copying this session
-- finishes before the children are re-parented (each statement sees a fresh snapshot).
CREATE FUNCTION ${s}.sk_delete(p_id text) RETURNS boolean LANGUAGE plpgsql AS $fn$
DECLARE
  v_parent text;
BEGIN
  SELECT s.parent_id INTO v_parent FROM ${s}.sessions AS s WHERE s.id = p_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN false;
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

-- Retention: select the roots after the newest p_max (locking them), promote their
-- children to roots, drop pins, messages and search rows, delete. Status, events and
-- bindings go with the rows (ON DELETE CASCADE).
CREATE FUNCTION ${s}.sk_enforce_max(p_max bigint) RETURNS integer LANGUAGE plpgsql AS $fn$
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
