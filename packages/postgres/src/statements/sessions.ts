// Statements of the session writes and reads that are not a commit: create, load,
// loadMessages, save's reads under the row lock, branch/clone's copy, pending search rows.
// Each statement sits next to the type of the rows it returns. `s`: the quoted schema.

import type { HeaderRow } from '../codec.js';
import type { LineageColumns } from '../lineage.js';
import { headerColumns, sql } from '../sql.js';

/** What `create` learns: whether the row was inserted, and the children already pointing at it. */
export interface CreatedRow {
  created: number;
  children: string[];
}

/** One row of `load`: the header as JSON text on the first row, then one message per row. */
export interface LoadRow {
  header: string | null;
  seq: number | null;
  body: string | null;
}

/** A message row (`seq` and `body` are null for a session without messages). */
export interface MessageRow {
  seq: number | null;
  body: string | null;
}

/** The stored header fields `save` needs (core's `savedHeader` keeps or moves them). */
export interface SaveLockRow {
  revision: string;
  message_count: number;
  created_at: Date;
  updated_at: Date;
  parent_id: string | null;
  branched_at_turn: number | null;
}

/** A message body (in seq order). */
export interface BodyRow {
  body: string;
}

/** The source of a branch or clone: its header and lineage. */
export type CopySourceRow = HeaderRow & LineageColumns;

/** A message row copied by a branch or clone. */
export interface CopiedRow {
  seq: number;
  body: string;
}

/** The session statements of schema `s`; `names` are the prepared-statement names. */
export function sessionStatements(s: string, names: { load: string; loadMessages: string }) {
  return { ...readStatements(s, names), ...writeStatements(s) };
}

/** The statements that read a session's header and history. */
function readStatements(s: string, names: { load: string; loadMessages: string }) {
  return {
    /**
     * $1 id. One statement, so one snapshot: the header (as JSON, on the first row only) and
     * the message rows in seq order, one row each (cheaper to decode than one huge string).
     */
    load: sql<LoadRow>(
      `SELECT CASE WHEN m.seq IS NULL OR m.seq = 0 THEN row_to_json(h)::text END AS header,
  m.seq, m.body
FROM (SELECT ${headerColumns('s', s)} FROM ${s}.sessions AS s WHERE s.id = $1) AS h
LEFT JOIN LATERAL (
  SELECT x.seq, x.body FROM ${s}.messages AS x WHERE x.session_id = h.id ORDER BY x.seq
) AS m ON true`,
      names.load,
    ),

    /** $1 id: the message rows in seq order; no row when the session does not exist. */
    loadMessages: sql<MessageRow>(
      `SELECT m.seq, m.body FROM ${s}.sessions AS s
LEFT JOIN LATERAL (
  SELECT x.seq, x.body FROM ${s}.messages AS x WHERE x.session_id = s.id ORDER BY x.seq
) AS m ON true
WHERE s.id = $1`,
      names.loadMessages,
    ),

    /** $1 id: the message bodies in seq order. */
    messageBodies: sql<BodyRow>(
      `SELECT body FROM ${s}.messages WHERE session_id = $1 ORDER BY seq`,
    ),
  };
}

/** The statements that write whole sessions (create, save, branch, clone). */
function writeStatements(s: string) {
  return {
    /**
     * Inserts a session at revision 1 with its message and search rows, unless the id is
     * taken. $1 id, $2 title, $3 folder, $4 parent id, $5 createdAt, $6 updatedAt, $7 model,
     * $8 provider, $9 tokenCount, $10 costUsd, $11 turnCount, $12 metadata JSON, $13 status,
     * $14 branchedAtTurn, $15 archivedAt, $16 mode, $17 state JSON, $18 message count,
     * $19 bodies, $20/$25/$21 search rows' first seqs, next seqs and texts, $22 the title as
     * search reads it ('' under scope none), $23/$24 lineage. The search rows and the title's
     * go to `search_pending` under the new session's search epoch.
     */
    create: sql<CreatedRow>(`WITH ins AS (
  INSERT INTO ${s}.sessions (id, title, folder, parent_id, created_at, updated_at, model, provider,
    token_count, cost_usd, turn_count, metadata, status, branched_at_turn, revision, archived_at,
    mode, state, message_count, history_rewrites, merge_base, title_search)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, 1, $15, $16, $17, $18,
    $23, $24::jsonb, $22)
  ON CONFLICT (id) DO NOTHING
  RETURNING id, search_epoch
), m AS (
  INSERT INTO ${s}.messages (session_id, seq, body)
  SELECT ins.id, u.o::integer - 1, u.b FROM ins, unnest($19::text[]) WITH ORDINALITY AS u(b, o)
), r AS (
  INSERT INTO ${s}.search_pending (session_id, seq, next_seq, epoch, text)
  SELECT ins.id, u.o, u.e, ins.search_epoch, u.t
  FROM ins, unnest($20::integer[], $25::integer[], $21::text[]) AS u(o, e, t)
  UNION ALL
  SELECT ins.id, -1, -1, ins.search_epoch, $22::text FROM ins WHERE $22::text <> ''
)
SELECT (SELECT count(*) FROM ins)::integer AS created,
  ARRAY(SELECT c.id::text FROM ${s}.sessions AS c WHERE c.parent_id = $1 ORDER BY c.id) AS children`),

    /** $1 id: the stored header fields save needs, row-locked for the transaction. */
    lockForSave: sql<SaveLockRow>(
      `SELECT revision, message_count, created_at, updated_at, parent_id, branched_at_turn
FROM ${s}.sessions WHERE id = $1 FOR UPDATE`,
    ),

    /** $1 id: the source of a branch or clone, share-locked for the transaction. */
    lockCopySource: sql<CopySourceRow>(
      `SELECT ${headerColumns('x', s)}, x.history_rewrites, x.merge_base
         FROM ${s}.sessions AS x WHERE x.id = $1 FOR SHARE`,
    ),

    /**
     * Inserts a branch or clone at revision 1 and copies the source's first messages; returns
     * them. $1 id, $2 title, $3 folder, $4 parent id, $5 now (created and updated), $6 model,
     * $7 provider, $8 tokenCount, $9 costUsd, $10 turnCount, $11 metadata JSON, $12 status,
     * $13 branchedAtTurn, $14 mode, $15 state JSON, $16 messages to copy, $17 source id,
     * $18/$19 lineage, $20 the title as search reads it.
     */
    insertCopy: sql<CopiedRow>(`WITH ins AS (
  INSERT INTO ${s}.sessions (id, title, folder, parent_id, created_at, updated_at, model, provider,
    token_count, cost_usd, turn_count, metadata, status, branched_at_turn, revision, mode, state,
    message_count, history_rewrites, merge_base, title_search)
  VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, 1, $14, $15, $16,
    $18, $19::jsonb, $20)
  RETURNING id
), src AS (
  SELECT seq, body FROM ${s}.messages WHERE session_id = $17 AND seq < $16
), im AS (
  INSERT INTO ${s}.messages (session_id, seq, body) SELECT ins.id, src.seq, src.body FROM ins, src
)
SELECT src.seq, src.body FROM src ORDER BY src.seq`),

    /**
     * $1 id, $2 first seqs, $3 next seqs, $4 texts: pending search rows (the title's at
     * seq -1) under the session's current search epoch.
     */
    insertPending: sql(`INSERT INTO ${s}.search_pending (session_id, seq, next_seq, epoch, text)
  SELECT x.id, u.o, u.e, x.search_epoch, u.t
  FROM ${s}.sessions AS x, unnest($2::integer[], $3::integer[], $4::text[]) AS u(o, e, t)
  WHERE x.id = $1`),
  };
}

/** The statements `sessionStatements` builds. */
export type SessionStatements = ReturnType<typeof sessionStatements>;
