// The event log: one immutable object per event, created with `If-None-Match: *` so each
// sequence number has exactly one event and sequences have no gaps. A hint object names
// the newest sequence; appenders probe past it.
import type { JsonValue, SessionEvent } from '@sessionkit/core';
import { LOST_RACE, planEvent, retryLostRaces, throwIfAborted } from '@sessionkit/core/adapter';
import { FORMAT, parseJson } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { eventHintKey, eventKey, eventsPrefix, sequenceOf } from './keys.js';
import { readLive } from './session-log.js';

/** Appends an event to the live session `id` (payload already validated). */
export async function appendEvent(
  ctx: StoreContext,
  id: string,
  type: string,
  payload: JsonValue,
  signal?: AbortSignal,
): Promise<SessionEvent> {
  const current = await readLive(ctx.io, id);
  const doing = `appending an event to "${id}"`;
  const hint = await ctx.io.get(eventHintKey(id, current.gen), doing);
  // The hint only says where to start; the create-only writes below step past every
  // sequence already taken.
  let sequence = 0;
  try {
    const hinted = Number(parseJson(hint?.text ?? '', 'event hint').sequence);
    if (Number.isSafeInteger(hinted) && hinted >= 0) sequence = hinted + 1;
  } catch {
    sequence = 0;
  }
  if (sequence === 0) {
    // No usable hint (never written, or lost): the newest event key, by listing.
    const keys = await ctx.io.list(eventsPrefix(id, current.gen), doing);
    const last = keys.at(-1);
    sequence = last === undefined ? 1 : sequenceOf(last.key) + 1;
  }
  return retryLostRaces({ errors, operation: 'append', sessionId: id, signal }, async () => {
    throwIfAborted(errors, signal, 'append', id);
    const event = planEvent(current.state.header.revision, sequence - 1, type, payload);
    const text = JSON.stringify({ format: FORMAT, ...event, at: event.at.getTime() });
    const key = eventKey(id, current.gen, sequence);
    const out = await ctx.io.put(key, text, { ifAbsent: true }, doing);
    if (!out.written) {
      // Taken: step past it (a 409 is a write in flight on it: try it again).
      if (out.why === 'failed') sequence++;
      return LOST_RACE;
    }
    await ctx.io.putPlain(
      eventHintKey(id, current.gen),
      JSON.stringify({ format: FORMAT, sequence }),
      doing,
    );
    return event;
  });
}

/** Events after `afterSequence`, in order, at most `limit` (default all). */
export async function readEvents(
  ctx: StoreContext,
  id: string,
  afterSequence: number,
  limit: number | undefined,
): Promise<SessionEvent[]> {
  const current = await readLive(ctx.io, id);
  const doing = `reading the events of "${id}"`;
  const keys = await ctx.io.list(eventsPrefix(id, current.gen), doing, {
    startAfter: eventKey(id, current.gen, afterSequence),
    max: limit,
  });
  const events = await Promise.all(
    keys.map(async ({ key }) => {
      const got = await ctx.io.get(key, doing);
      if (got === undefined) return undefined;
      try {
        const raw = parseJson(got.text, `event ${sequenceOf(key)}`);
        return {
          sequence: raw.sequence as number,
          revision: raw.revision as number,
          at: new Date(raw.at as number),
          type: raw.type as string,
          payload: (raw.payload ?? null) as JsonValue,
        };
      } catch (e) {
        throw errors.corrupt(id, (e as Error).message);
      }
    }),
  );
  return events.filter((e): e is SessionEvent => e !== undefined);
}
