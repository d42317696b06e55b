// Statements of repair (derived data rebuilt from the authoritative rows) and retention
// (`enforceMax`); repair's sweep of orphaned search rows is in search.ts. `s`: the quoted
// schema.
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
  title_search: string;
  search_epoch: string;
}

/** A stored message row. */
export interface StoredMessageRow {
  seq: number;
  body: string;
}

/** A stored search text of the current epoch: a chunk (`pending` false) or a pending row. */
export interface StoredSearchText {
  seq: number;
  next_seq: number;
  text: string;
  pending: boolean;
}

/** A words row. */
export interface WordsTextRow {
  words: string;
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

    /** $1 id: title, message count, state and the search fields, row-locked. */
    lockRepairHead: sql<RepairHeadRow>(
      `SELECT title, message_count, state, title_search, search_epoch::text AS search_epoch
       FROM ${s}.sessions WHERE id = $1 FOR UPDATE`,
    ),

    /** $1 id: the message rows in seq order. */
    messageRows: sql<StoredMessageRow>(
      `SELECT seq, body FROM ${s}.messages WHERE session_id = $1 ORDER BY seq`,
    ),

    /** $1 id, $2 epoch: its message search texts of that epoch, chunks and pending rows, in seq order. */
    storedSearchTexts: sql<StoredSearchText>(
      `SELECT first_seq AS seq, end_seq AS next_seq, text, false AS pending
       FROM ${s}.search_chunks WHERE session_id = $1 AND epoch = $2
       UNION ALL
       SELECT seq, next_seq, text, true FROM ${s}.search_pending
       WHERE session_id = $1 AND epoch = $2 AND seq >= 0
       ORDER BY seq`,
    ),

    /** $1 id: whether a title row is pending. */
    titlePending: sql<{ p: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${s}.search_pending WHERE session_id = $1 AND seq = -1) AS p`,
    ),

    /** $1 id: its title's words rows. */
    titleWords: sql<WordsTextRow>(
      `SELECT words FROM ${s}.search_words WHERE session_id = $1 AND block = -1`,
    ),

    /** $1 id, $2 message count. */
    setMessageCount: sql(`UPDATE ${s}.sessions SET message_count = $2 WHERE id = $1`),

    /** Whether autovacuum runs on this server (it needs track_counts too). */
    autovacuumOn: sql<{ on: boolean }>(
      `SELECT current_setting('autovacuum') = 'on' AND current_setting('track_counts') = 'on' AS on`,
    ),

    /** $1 table name: its row count as the planner knows it (-1: never analyzed or vacuumed). */
    tableRows: sql<{ n: number }>(
      `SELECT reltuples AS n FROM pg_class WHERE oid = ('${s}.' || quote_ident($1))::regclass`,
    ),

    /** $1 max: keeps the newest $1 roots and deletes the others (migration 004's function). */
    enforceMax: sql<CountRow>(`SELECT ${s}.sk_enforce_max($1) AS n`),
  };
}

/** The statements `maintenanceStatements` builds. */
export type MaintenanceStatements = ReturnType<typeof maintenanceStatements>;
