// The plan of an event append.
import type { JsonValue, SessionEvent } from '../../types.js';

/**
 * The event `append` stores after the session's last one: sequence `lastSequence + 1`
 * (gapless), the session's current `revision`, `at` = now. `payload` is the validated copy.
 * Pure.
 */
export function planEvent(
  revision: number,
  lastSequence: number,
  type: string,
  payload: JsonValue,
  now: Date = new Date(),
): SessionEvent {
  return { sequence: lastSequence + 1, revision, at: new Date(now.getTime()), type, payload };
}
