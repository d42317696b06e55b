import type { ErrorFactory } from '@sessionkit/core/adapter';
import type { Pool, PoolClient } from 'pg';
import { migration004 } from './migrations/004-lineage.js';

/** The schema a store uses when none is given. */
export const DEFAULT_SCHEMA = 'sessionkit';

// Unquoted-identifier rules, at most 63 bytes (PostgreSQL's NAMEDATALEN - 1).
const SCHEMA_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Throws `invalid_argument` unless `schema` is a plain identifier: a letter or `_`, then
 * letters, digits or `_`, at most 63 characters. It is always double-quoted in SQL too.
 */
export function assertSchemaName(errors: ErrorFactory, schema: unknown): asserts schema is string {
  if (typeof schema !== 'string' || !SCHEMA_PATTERN.test(schema) || schema.startsWith('pg_')) {
    throw errors.invalid(
      `schema must be 1–63 chars of [A-Za-z0-9_], starting with a letter or "_" and not with "pg_", got ${JSON.stringify(String(schema)).slice(0, 80)}`,
    );
  }
}

/** `"name"` with embedded quotes doubled (names are validated too; this is defence in depth). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** One versioned step of the schema. Applied in order, each once, inside the migration lock. */
export interface Migration {
  version: number;
  name: string;
  /** The SQL, given the quoted schema name. */
  sql(s: string): string;
  /**
   * A step in JavaScript after the SQL, in the same transaction (e.g. recomputing derived
   * data with core's functions), given the migrating client and the quoted schema name.
   */
  run?(client: PoolClient, s: string): Promise<void>;
}

/**
 * Every migration, oldest first. Never edit a released one: add the next version.
 *
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
export const MIGRATIONS: readonly Migration[] = [
  {
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
  },
  {
    version: 2,
    name: 'delete_locks_parent_enforce_max_recheck',
    // sk_delete v1 re-parented the children to the parent without locking it: a
    // concurrent delete of that parent (or enforceMax) could miss them and leave them
    // pointing at a deleted session. v2 locks the parent first (FOR KEY SHARE: commits
    // to the parent still run), then the session — the parent → child order every
    // writer that re-parents or merges takes — and re-checks the parent under the lock.
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
  },
  {
    version: 3,
    name: 'enforce_max_locks_only_victims',
    // sk_enforce_max v2 took its candidates with `ORDER BY … OFFSET p_max FOR UPDATE`,
    // which locks the rows OFFSET skips as well: every root it kept, so every commit to
    // any root waited for the retention pass. v3 picks the candidates without a lock,
    // locks only those (in id order), then re-selects them as v2 did.
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
  },
  migration004,
];

/** The newest schema version this package knows. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

// Advisory lock class for sessionkit migrations; the object id is a hash of the schema.
const LOCK_CLASS = 0x5e55;
// Object id of the lock that serialises CREATE EXTENSION across schemas.
const EXTENSION_LOCK = 0;

/** What `migrate` found and did. */
export interface MigrationOutcome {
  /** Versions applied by this call (empty when the schema was up to date). */
  applied: number[];
  /** True when the trigram index serves search; false when pg_trgm is unavailable. */
  trigram: boolean;
}

/**
 * Brings `schema` to the latest version: creates it when missing, applies each pending
 * migration once and records it in `schema_migrations`, all inside one transaction
 * holding `pg_advisory_xact_lock` keyed on the schema name, so any number of processes
 * may open the same empty database at once. Then makes sure the trigram index exists
 * when the `pg_trgm` extension is available (creating the extension if allowed).
 * Throws the driver's error (the caller wraps it).
 */
export async function migrate(pool: Pool, schema: string): Promise<MigrationOutcome> {
  const s = quoteIdent(schema);
  const client = await pool.connect();
  let broken: unknown;
  // Checked-out clients have no pool listener: without this, a connection error between
  // statements would be an unhandled 'error' event (see PostgresStore's #tx).
  const onClientError = (err: Error) => {
    broken ??= err;
  };
  client.on('error', onClientError);
  try {
    // Fast path: an up-to-date schema needs no lock.
    const fast = await tryCurrentVersion(client, schema);
    if (fast === LATEST_VERSION && (await hasTrigramIndex(client, schema))) {
      return { applied: [], trigram: true };
    }
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, schema]);
      // Only when missing: CREATE SCHEMA checks the database CREATE privilege even with
      // IF NOT EXISTS, and a role may own a schema a DBA created for it without that right.
      const present = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
      if (present.rowCount === 0) await client.query(`CREATE SCHEMA ${s}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
          version integer PRIMARY KEY,
          name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`,
      );
      const done = await client.query<{ version: number }>(
        `SELECT version FROM ${s}.schema_migrations`,
      );
      const have = new Set(done.rows.map((r) => Number(r.version)));
      const applied: number[] = [];
      for (const m of MIGRATIONS) {
        if (have.has(m.version)) continue;
        await client.query(m.sql(s));
        if (m.run) await m.run(client, s);
        await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
          m.version,
          m.name,
        ]);
        applied.push(m.version);
      }
      const trigram = await ensureTrigram(client, schema);
      await client.query('COMMIT');
      return { applied, trigram };
    } catch (e) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError;
      });
      throw e;
    }
  } catch (e) {
    broken ??= isConnectionError(e) ? e : undefined;
    throw e;
  } finally {
    client.removeListener('error', onClientError);
    client.release(broken instanceof Error ? broken : undefined);
  }
}

async function tryCurrentVersion(client: PoolClient, schema: string): Promise<number | undefined> {
  const exists = await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
    `${quoteIdent(schema)}.schema_migrations`,
  ]);
  if (!exists.rows[0]?.ok) return undefined;
  const r = await client.query<{ v: number | null }>(
    `SELECT max(version) AS v FROM ${quoteIdent(schema)}.schema_migrations`,
  );
  return r.rows[0]?.v ?? undefined;
}

async function hasTrigramIndex(client: PoolClient, schema: string): Promise<boolean> {
  const r = await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
    `${quoteIdent(schema)}.search_rows_trgm`,
  ]);
  return r.rows[0]?.ok === true;
}

/**
 * Creates the GIN trigram index over `search_rows.text` when `pg_trgm` is installed or can
 * be installed (a trusted extension since PostgreSQL 13: needs CREATE on the database).
 * Without it search still works, by scanning `search_rows` (never `messages`).
 * Runs inside the caller's transaction; a failure to create the extension is contained in
 * a savepoint.
 */
async function ensureTrigram(client: PoolClient, schema: string): Promise<boolean> {
  if (await hasTrigramIndex(client, schema)) return true;
  let extSchema = await trigramSchema(client);
  if (extSchema === undefined) {
    await client.query('SAVEPOINT sk_trgm');
    try {
      // Serialise CREATE EXTENSION across schemas (parallel first opens would race on it).
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, EXTENSION_LOCK]);
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      await client.query('RELEASE SAVEPOINT sk_trgm');
    } catch (e) {
      if (isConnectionError(e)) throw e;
      await client.query('ROLLBACK TO SAVEPOINT sk_trgm');
      warnNoTrigram(schema, e);
      return false;
    }
    extSchema = await trigramSchema(client);
    if (extSchema === undefined) return false;
  }
  const s = quoteIdent(schema);
  await client.query(
    `CREATE INDEX IF NOT EXISTS search_rows_trgm ON ${s}.search_rows USING gin (text ${quoteIdent(extSchema)}.gin_trgm_ops)`,
  );
  return true;
}

async function trigramSchema(client: PoolClient): Promise<string | undefined> {
  const r = await client.query<{ nspname: string }>(
    `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_trgm'`,
  );
  return r.rows[0]?.nspname;
}

const warned = new Set<string>();
function warnNoTrigram(schema: string, e: unknown): void {
  if (warned.has(schema)) return;
  warned.add(schema);
  const reason = e instanceof Error ? e.message : String(e);
  process.emitWarning(
    `[sessionkit/postgres] pg_trgm is not available (${reason}); search in schema "${schema}" scans search_rows instead of using a trigram index. Run "CREATE EXTENSION pg_trgm" as a privileged user and reopen the store to index it.`,
    { code: 'SESSIONKIT_PG_NO_TRGM' },
  );
}

/** True for errors that mean the connection itself is gone (the client must be discarded). */
export function isConnectionError(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03')
    return true;
  if (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'EPIPE',
      'ETIMEDOUT',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'ENOTFOUND',
      'EAI_AGAIN',
    ].includes(code)
  )
    return true;
  const message = typeof err.message === 'string' ? err.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable|ended unexpectedly/i.test(
    message,
  );
}
