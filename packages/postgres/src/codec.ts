// Row mapping: header rows to summaries (every stored header checked by the kit's one
// rule), message rows to messages, JSON text to values.
import type { JsonValue, SessionSummary } from '@sessionkit/core';
import { assertStoredHeader, type SessionHeader } from '@sessionkit/core/adapter';
import { toDate } from './dates.js';
import { errors } from './errors.js';

/** A row of the header columns (`headerColumns` in sql.ts). */
export interface HeaderRow {
  id: string;
  title: string;
  folder: string;
  parent_id: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  model: string;
  provider: string;
  token_count: string | number;
  cost_usd: number;
  turn_count: string | number;
  metadata: Record<string, string>;
  status: string;
  branched_at_turn: number | null;
  revision: string | number;
  archived_at: Date | string | null;
  mode: string | null;
  state: string | null;
  message_count: number;
  children: string[];
}

export function parseJson(id: string, text: string, what: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (e) {
    throw errors.corrupt(id, `${what} is not valid JSON`, e);
  }
}

/**
 * Messages from `(seq, body)` rows in seq order. Throws `corrupt` when a body does not
 * parse or the seqs are not `first`, `first + 1` … (default 0; a gap means rows were
 * removed behind the store).
 */
export function parseMessageRows(
  id: string,
  given: readonly { seq: number | null; body: string | null }[],
  first = 0,
): unknown[] {
  let rows = given;
  // The plan returns rows in seq order; never trust that blindly.
  if (rows.some((r, i) => i > 0 && (r.seq ?? 0) < (rows[i - 1]!.seq ?? 0))) {
    rows = [...rows].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  }
  const out: unknown[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    if (row.seq !== first + i || row.body === null) {
      throw errors.corrupt(
        id,
        `message rows have a gap at ${first + i} (run repair() for a report)`,
      );
    }
    try {
      out[i] = JSON.parse(row.body);
    } catch (e) {
      throw errors.corrupt(id, `message ${first + i} is not valid JSON`, e);
    }
  }
  return out;
}

/** The caller's copy of freshly stringified messages, exactly as a later load returns them. */
export function parseBodies(id: string, bodies: readonly string[]): unknown[] {
  return bodies.map((body, i) => {
    try {
      return JSON.parse(body) as unknown;
    } catch (e) {
      throw errors.corrupt(id, `message ${i} is not valid JSON`, e);
    }
  });
}

/**
 * A caller-owned summary from a header row. Throws `corrupt` when the state does not parse
 * or, unless `check` is false, when the header is not one the kit's `assertStoredHeader`
 * accepts. Listing passes false: a header damaged behind the store (a date past year 9999)
 * is listed as it reads and reported `corrupt` by every call that loads or writes it,
 * rather than failing every page it falls on.
 */
export function summaryOf(row: HeaderRow, check = true): SessionSummary {
  const out: SessionSummary = {
    id: row.id,
    title: row.title,
    folder: row.folder,
    createdAt: toDate(row.id, row.created_at),
    updatedAt: toDate(row.id, row.updated_at),
    model: row.model,
    provider: row.provider,
    tokenCount: Number(row.token_count),
    costUsd: Number(row.cost_usd),
    turnCount: Number(row.turn_count),
    metadata: row.metadata,
    status: row.status,
    children: row.children,
    revision: Number(row.revision),
    messageCount: row.message_count,
  };
  if (row.parent_id !== null) out.parentId = row.parent_id;
  if (row.branched_at_turn !== null) out.branchedAtTurn = row.branched_at_turn;
  if (row.archived_at !== null) out.archivedAt = toDate(row.id, row.archived_at);
  if (row.mode !== null) out.mode = row.mode;
  if (row.state !== null) out.state = parseJson(row.id, row.state, 'state');
  if (check) assertStoredHeader(errors, row.id, out);
  return out;
}

/** The stored header of session `id` from its row, with its message count and children. */
export function headerOfRow(
  id: string,
  row: HeaderRow,
): { header: SessionHeader; messageCount: number; children: string[] } {
  const { children, messageCount, ...header } = summaryOf(row);
  if (header.id !== id) throw errors.corrupt(id, 'the row names another session');
  return { header, messageCount, children };
}
