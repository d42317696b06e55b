// Statements of repair (derived data rebuilt from the authoritative rows) and retention
// (`enforceMax`). `s`: the quoted schema.
import { sql } from '../sql.js';

/** A session id (pages of sessions). */
export interface IdRow {
  id: string;
}

/** The header fields repair checks the derived data against. */
export interface RepairHeadRow {
  title: string;
  message_count: number;
  state: string | null;
}

/** A stored message row. */
export interface StoredMessageRow {
  seq: number;
  body: string;
}

/** A stored search row. */
export interface SearchRow {
  seq: number;
  text: string;
}

/** A count. */
export interface CountRow {
  n: number;
}

/** The repair and retention statements of schema `s`. */
export function maintenanceStatements(s: string) {
  return {
    /** $1 after id: the next 200 session ids in byte order. */
    sessionPage: sql<IdRow>(
      `SELECT id FROM ${s}.sessions WHERE id > $1::text COLLATE "C" ORDER BY id LIMIT 200`,
    ),

    /** $1 id: title, message count and state, row-locked. */
    lockRepairHead: sql<RepairHeadRow>(
      `SELECT title, message_count, state FROM ${s}.sessions WHERE id = $1 FOR UPDATE`,
    ),

    /** $1 id: the message rows in seq order. */
    messageRows: sql<StoredMessageRow>(
      `SELECT seq, body FROM ${s}.messages WHERE session_id = $1 ORDER BY seq`,
    ),

    /** $1 id: the search rows (title at -1 first) in seq order. */
    searchRows: sql<SearchRow>(
      `SELECT seq, text FROM ${s}.search_rows WHERE session_id = $1 ORDER BY seq`,
    ),

    /** $1 id: deletes all its search rows (the title's too). */
    deleteSearchRows: sql(`DELETE FROM ${s}.search_rows WHERE session_id = $1`),

    /** $1 id, $2 message count. */
    setMessageCount: sql(`UPDATE ${s}.sessions SET message_count = $2 WHERE id = $1`),

    /** Deletes the search rows of sessions that no longer exist; counts those sessions. */
    deleteOrphanSearchRows: sql<CountRow>(`WITH d AS (
  DELETE FROM ${s}.search_rows AS r
  WHERE NOT EXISTS (SELECT 1 FROM ${s}.sessions AS x WHERE x.id = r.session_id)
  RETURNING r.session_id
)
SELECT count(DISTINCT session_id)::integer AS n FROM d`),

    /**
     * Moves the pending search rows (`search_pending`, written by turns) of up to $1
     * sessions into `search_rows`, where the trigram index covers them; returns how many
     * rows moved. Each session's row is locked first (`FOR NO KEY UPDATE SKIP LOCKED`: a
     * session being written is left for the next pass), so a writer that deletes search
     * rows afterwards (replace, delete, merge) sees them moved; the move itself is one
     * statement, so a search sees each row on one side or the other, never both or none.
     */
    indexPendingSearch: sql<CountRow>(`WITH l AS (
  SELECT x.id FROM ${s}.sessions AS x
  WHERE x.id IN (SELECT DISTINCT p.session_id FROM ${s}.search_pending AS p LIMIT $1)
  FOR NO KEY UPDATE OF x SKIP LOCKED
), d AS (
  DELETE FROM ${s}.search_pending AS p USING l WHERE p.session_id = l.id
  RETURNING p.session_id, p.seq, p.text
), i AS (
  INSERT INTO ${s}.search_rows (session_id, seq, text) SELECT * FROM d
  ON CONFLICT (session_id, seq) DO UPDATE SET text = EXCLUDED.text
)
SELECT count(*)::integer AS n FROM d`),

    /** $1 max: keeps the newest $1 roots and deletes the others (migration 004's function). */
    enforceMax: sql<CountRow>(`SELECT ${s}.sk_enforce_max($1) AS n`),
  };
}

/** The statements `maintenanceStatements` builds. */
export type MaintenanceStatements = ReturnType<typeof maintenanceStatements>;
