// Windowed history reads: one statement (one MVCC snapshot) reads the session's revision
// and message count and the message rows of the window by key range on
// (session_id, seq), so its cost grows with the window, not with the history.
import { type NormalizedMessageWindow, windowBounds } from '@sessionkit/core/adapter';
import type { QueryConfig } from 'pg';
import { parseMessageRows } from './codec.js';
import { errors } from './errors.js';

/** A row of the window statement: the header part repeats on every row. */
export interface WindowRow {
  revision: string | number;
  message_count: number;
  seq: number | null;
  body: string | null;
}

// Window sizes beyond the largest message count (2^31 − 1) select the same rows.
const CAP = 2 ** 31;
const capped = (v: number | undefined) => (v === undefined ? null : Math.min(v, CAP));

/**
 * The statement reading `window` of session `id`. The bounds are computed in the
 * statement from the snapshot's `message_count` (`[lo, hi)`, as core's `windowBounds`
 * computes them; the caller checks the rows against `windowBounds`), and the message rows
 * come from an index range scan of the primary key. `s` is the quoted schema.
 */
export function windowStatement(
  s: string,
  name: string,
  id: string,
  window: NormalizedMessageWindow,
): QueryConfig {
  const last = window.kind === 'last' ? window.last : undefined;
  const offset = window.kind === 'range' ? window.offset : 0;
  const limit = window.kind === 'range' ? window.limit : undefined;
  return {
    name,
    text: `SELECT s.revision, s.message_count, m.seq, m.body
FROM ${s}.sessions AS s
CROSS JOIN LATERAL (SELECT CASE WHEN $2::bigint IS NOT NULL
  THEN greatest(0, s.message_count - $2::bigint)
  ELSE least($3::bigint, s.message_count) END AS lo) AS b
CROSS JOIN LATERAL (SELECT CASE WHEN $2::bigint IS NOT NULL OR $4::bigint IS NULL
  THEN s.message_count::bigint
  ELSE least(s.message_count::bigint, b.lo + $4::bigint) END AS hi) AS e
LEFT JOIN LATERAL (
  SELECT x.seq, x.body FROM ${s}.messages AS x
  WHERE x.session_id = s.id AND x.seq >= b.lo AND x.seq < e.hi ORDER BY x.seq
) AS m ON true
WHERE s.id = $1`,
    values: [id, capped(last), capped(offset), capped(limit)],
  };
}

/** A window as `loadMessageWindow` returns it, before the messages are typed. */
export interface ParsedWindow {
  messages: unknown[];
  offset: number;
  messageCount: number;
  revision: number;
}

/**
 * The window from the statement's rows. Throws `not_found` (no row: no session) and
 * `corrupt` when the rows are not exactly the positions core's `windowBounds` gives for
 * the snapshot's message count (rows removed behind the store) or a body does not parse.
 */
export function parseWindow(
  id: string,
  window: NormalizedMessageWindow,
  rows: readonly WindowRow[],
): ParsedWindow {
  const first = rows[0];
  if (!first) throw errors.notFound(id);
  const messageCount = first.message_count;
  const { start, end } = windowBounds(window, messageCount);
  const present = first.seq === null ? [] : rows;
  if (present.length !== end - start) {
    throw errors.corrupt(
      id,
      `message rows ${start}…${end - 1} are incomplete (run repair() for a report)`,
    );
  }
  const messages = parseMessageRows(id, present, start);
  return { messages, offset: start, messageCount, revision: Number(first.revision) };
}
