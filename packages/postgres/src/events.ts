// The event log: gap-free sequences per session, bumped under the session's row lock.
import type { JsonValue, SessionEvent } from '@sessionkit/core';
import { parseJson } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';

/** Appends an event with payload JSON `text`. Throws `not_found`. */
export async function appendEvent(
  ctx: StoreContext,
  id: string,
  type: string,
  text: string,
): Promise<SessionEvent> {
  const r = await ctx.db.query(ctx.statements.events.appendEvent, [id, new Date(), type, text], {
    doing: 'append',
  });
  const row = r.rows[0];
  if (!row) throw errors.notFound(id);
  return {
    sequence: Number(row.seq),
    revision: Number(row.revision),
    at: row.at,
    type,
    payload: JSON.parse(text) as JsonValue,
  };
}

/** Events after `afterSequence`, at most `limit` (all when undefined). Throws `not_found`, `corrupt`. */
export async function listEvents(
  ctx: StoreContext,
  id: string,
  afterSequence: number,
  limit: number | undefined,
): Promise<SessionEvent[]> {
  const r = await ctx.db.query(ctx.statements.events.events, [id, afterSequence, limit ?? null], {
    doing: 'events',
  });
  if (r.rows.length === 0) throw errors.notFound(id);
  const out: SessionEvent[] = [];
  for (const row of r.rows) {
    if (row.seq === null) continue;
    out.push({
      sequence: Number(row.seq),
      revision: Number(row.revision),
      at: row.at,
      type: row.type,
      payload: parseJson(id, row.payload, 'event payload'),
    });
  }
  return out;
}
