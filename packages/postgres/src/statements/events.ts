// Statements of the event log and the runtime status, the two side tables a session
// has besides its transcript. `s`: the quoted schema.
import { sql } from '../sql.js';

/** An appended event's sequence, the session's revision then, and its time. */
export interface AppendedEventRow {
  seq: string;
  revision: string;
  at: Date;
}

/** An event as `events` reads it (`seq` null on the one row of a session without events). */
export interface EventRow {
  seq: string | null;
  revision: string;
  at: Date;
  type: string;
  payload: string;
}

/** A session's runtime status (null when none was saved). */
export interface StatusRow {
  status: string | null;
}

/** The event and runtime-status statements of schema `s`. */
export function eventStatements(s: string) {
  return {
    /**
     * $1 id, $2 now, $3 type, $4 payload JSON: bumps the session's event counter under its
     * row lock and inserts the event; no row when the session does not exist.
     */
    appendEvent: sql<AppendedEventRow>(`WITH x AS (
  UPDATE ${s}.sessions SET last_event_seq = last_event_seq + 1 WHERE id = $1
  RETURNING id, last_event_seq, revision
)
INSERT INTO ${s}.events (session_id, seq, revision, at, type, payload)
SELECT x.id, x.last_event_seq, x.revision, $2, $3, $4 FROM x
RETURNING seq, revision, at`),

    /**
     * $1 id, $2 after sequence, $3 limit (null: all): the events in order; no row when the
     * session does not exist, one row with null `seq` when it has none.
     */
    events: sql<EventRow>(`SELECT e.seq, e.revision, e.at, e.type, e.payload FROM ${s}.sessions AS x
LEFT JOIN LATERAL (
  SELECT seq, revision, at, type, payload FROM ${s}.events
  WHERE session_id = x.id AND seq > $2 ORDER BY seq LIMIT $3
) AS e ON true
WHERE x.id = $1 ORDER BY e.seq`),

    /** $1 id, $2 status JSON: upserts the status when the session exists; one row when it did. */
    saveStatus: sql(`INSERT INTO ${s}.runtime_status (session_id, status)
SELECT id, $2 FROM ${s}.sessions WHERE id = $1
ON CONFLICT (session_id) DO UPDATE SET status = EXCLUDED.status
RETURNING 1`),

    /** $1 id: the status; no row when the session does not exist. */
    loadStatus: sql<StatusRow>(`SELECT r.status FROM ${s}.sessions AS s
LEFT JOIN ${s}.runtime_status AS r ON r.session_id = s.id WHERE s.id = $1`),
  };
}

/** The statements `eventStatements` builds. */
export type EventStatements = ReturnType<typeof eventStatements>;
