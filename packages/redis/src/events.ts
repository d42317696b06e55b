// The event log: a list in the session's slot; entry i holds sequence i + 1, so a read
// after a sequence is one LRANGE whose cost grows with the events returned.
import type { JsonValue, SessionEvent } from '@sessionkit/core';
import { planEvent, throwIfAborted } from '@sessionkit/core/adapter';
import { call } from './calls.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { SCRIPTS } from './lua/index.js';
import { outcomeNumbers, writeOnce, writeToken } from './write-ledger.js';

/**
 * Appends an event (sequence and revision assigned atomically, once even when the script
 * runs twice; `payload` is the validated copy). Throws `not_found`, `unavailable`,
 * `aborted` before the write.
 */
export async function appendEvent(
  ctx: StoreContext,
  id: string,
  type: string,
  payload: JsonValue,
  signal?: AbortSignal,
): Promise<SessionEvent> {
  throwIfAborted(errors, signal, 'append', id);
  const at = Date.now();
  const body = JSON.stringify({ type, payload: payload ?? null });
  const token = writeToken();
  const reply = await writeOnce<null>(
    ctx,
    SCRIPTS.appendEvent,
    id,
    ctx.keys.sessionKeyList(id),
    [at, body, token],
    token,
    `appending an event to session "${id}"`,
  );
  if (typeof reply !== 'string') throw errors.notFound(id);
  // The script assigned the sequence and read the revision atomically; the kit's plan
  // says what the event is.
  const [sequence, revision] = outcomeNumbers(reply);
  return planEvent(revision as number, (sequence as number) - 1, type, payload, new Date(at));
}

/** Events after `afterSequence`, at most `limit`. Throws `not_found`, `corrupt`. */
export async function readEvents(
  ctx: StoreContext,
  id: string,
  afterSequence: number,
  limit: number | undefined,
): Promise<SessionEvent[]> {
  const [exists, entries] = await call<[number, string[]]>(
    ctx,
    SCRIPTS.readEvents,
    ctx.keys.sessionKeyList(id),
    [afterSequence, limit ?? -1],
    `reading events of session "${id}"`,
  );
  if (Number(exists) !== 1) throw errors.notFound(id);
  return entries.map((entry) => decodeEvent(id, entry));
}

function decodeEvent(id: string, entry: string): SessionEvent {
  const newline = entry.indexOf('\n');
  const [sequence, revision, at] = entry.slice(0, newline).split(' ').map(Number);
  try {
    const { type, payload } = JSON.parse(entry.slice(newline + 1)) as {
      type: string;
      payload: JsonValue;
    };
    if (newline < 0 || !Number.isSafeInteger(sequence) || !Number.isSafeInteger(revision)) {
      throw new Error('bad event prefix');
    }
    return {
      sequence: sequence as number,
      revision: revision as number,
      at: new Date(at as number),
      type,
      payload,
    };
  } catch (cause) {
    throw errors.corrupt(id, 'an event record is damaged', cause);
  }
}
