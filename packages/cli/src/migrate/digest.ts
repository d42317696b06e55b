// Content digests that compare sessions across backends. Backends may reorder object keys
// (PostgreSQL's jsonb does) and return dates as Date objects, so values are written in a
// canonical form: object keys sorted, dates as ISO strings, array order kept.
import { createHash, type Hash } from 'node:crypto';
import type { JsonValue, Session, SessionEvent } from '@sessionkit/core';

/** `value` as JSON with object keys sorted at every level (dates as ISO strings). */
export function canonicalJson(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a session's digest covers. */
export interface SessionDigestParts {
  session: Session<unknown>;
  runtimeStatus: JsonValue | null;
  /** Events as `(sequence, type, payload)`: the store stamps `at` and `revision` itself. */
  events: readonly Pick<SessionEvent, 'sequence' | 'type' | 'payload'>[];
}

/**
 * Fields of a session that a migration keeps. `revision` is the store's concurrency
 * token (a copy starts at 1) and is left out; `children` is left out when `withChildren`
 * is false (while a migration runs, a parent's children may not all be copied yet).
 */
export function keptFields(
  session: Session<unknown>,
  withChildren: boolean,
): Record<string, unknown> {
  const { revision: _revision, messages: _messages, children, ...fields } = session;
  return withChildren ? { ...fields, children } : fields;
}

/** Feeds a session's header, then each message, into `hash` (one message string at a time). */
function hashSession(hash: Hash, session: Session<unknown>, withChildren: boolean): void {
  hash.update(canonicalJson(keptFields(session, withChildren)));
  hash.update(`\u0000messages:${session.messages.length}`);
  for (const message of session.messages) {
    hash.update('\u0000');
    hash.update(canonicalJson(message));
  }
}

/** The sha256 (hex) of a session's kept fields, messages, runtime status and events. */
export function sessionDigest(parts: SessionDigestParts, withChildren = true): string {
  const hash = createHash('sha256');
  hashSession(hash, parts.session, withChildren);
  hash.update(`\u0000status:${canonicalJson(parts.runtimeStatus)}`);
  hash.update(`\u0000events:${parts.events.length}`);
  for (const e of parts.events) {
    hash.update(
      `\u0000${canonicalJson({ sequence: e.sequence, type: e.type, payload: e.payload })}`,
    );
  }
  return hash.digest('hex');
}

/** The sha256 (hex) of a session without its status and events (the resume check). */
export function transcriptDigest(session: Session<unknown>): string {
  const hash = createHash('sha256');
  hashSession(hash, session, false);
  return hash.digest('hex');
}
