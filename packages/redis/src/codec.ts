// How a session's header and lineage are stored: JSON with dates as epoch milliseconds and
// a format version, read back with core's validation so a damaged record is `corrupt`.
import type { HistoryLineage, SessionHeader } from '@sessionkit/core/adapter';
import { assertSaveInput, readLineage } from '@sessionkit/core/adapter';
import { errors } from './errors.js';

/** The header format this version writes (`v` in the stored JSON). */
export const HEADER_FORMAT = 1;

const DATE_FIELDS = ['createdAt', 'updatedAt', 'archivedAt'] as const;

/** The stored JSON text of a header. */
export function encodeHeader(header: SessionHeader): string {
  const out: Record<string, unknown> = { v: HEADER_FORMAT };
  for (const [key, value] of Object.entries(header)) {
    if (value === undefined) continue;
    out[key] = value instanceof Date ? value.getTime() : value;
  }
  return JSON.stringify(out);
}

/** Fields every stored header has, beyond those `save` input requires. */
const STORED_FIELDS = ['createdAt', 'updatedAt', 'tokenCount', 'costUsd', 'turnCount', 'metadata'];

/**
 * The header stored for `id`, validated by core's save rules. Throws `corrupt` (naming the
 * problem) when the text is not a header of this id.
 */
export function decodeHeader(id: string, text: unknown): SessionHeader {
  if (typeof text !== 'string') throw errors.corrupt(id, 'the header is missing');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw errors.corrupt(id, 'the header is not JSON', cause);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw errors.corrupt(id, 'the header is not an object');
  }
  const record = raw as Record<string, unknown>;
  if (record.v !== HEADER_FORMAT) {
    throw errors.corrupt(id, `unknown header format ${JSON.stringify(record.v)}`);
  }
  if (record.id !== id) throw errors.corrupt(id, 'the header names another session');
  const missing = STORED_FIELDS.find((key) => record[key] === undefined);
  if (missing !== undefined) throw errors.corrupt(id, `header.${missing} is missing`);
  const { v: _v, ...fields } = record;
  for (const key of DATE_FIELDS) {
    const value = fields[key];
    if (value === undefined) continue;
    if (typeof value !== 'number') throw errors.corrupt(id, `header.${key} is not a time`);
    fields[key] = new Date(value);
  }
  const header = fields as unknown as SessionHeader;
  try {
    assertSaveInput(errors, { ...header, messages: [], children: [] });
  } catch (e) {
    throw errors.corrupt(
      id,
      `invalid header: ${(e as Error).message.replace(`${errors.prefix} `, '')}`,
      e,
    );
  }
  if (!Number.isSafeInteger(header.revision) || header.revision < 1) {
    throw errors.corrupt(id, 'header.revision is not a positive integer');
  }
  return header;
}

/** The stored lineage (core's reading: damaged or absent reads as a root's). */
export function decodeLineage(text: unknown): HistoryLineage {
  if (typeof text !== 'string') return readLineage(undefined);
  try {
    return readLineage(JSON.parse(text));
  } catch {
    return readLineage(undefined);
  }
}

/** The stored message count, or `corrupt`. */
export function decodeCount(id: string, text: unknown): number {
  const n = Number(text);
  if (typeof text !== 'string' || !Number.isSafeInteger(n) || n < 0) {
    throw errors.corrupt(id, 'the message count is not a number');
  }
  return n;
}

/**
 * Messages from their stored JSON texts, parsed in one `JSON.parse` of the joined array
 * (faster than one parse per message for long transcripts). Throws `corrupt`.
 */
export function decodeMessages(id: string, texts: readonly string[]): unknown[] {
  if (texts.length === 0) return [];
  try {
    const messages = JSON.parse(`[${texts.join(',')}]`) as unknown[];
    // A damaged text such as `1,2` would parse as two messages: the counts must agree.
    if (messages.length === texts.length) return messages;
  } catch (cause) {
    throw errors.corrupt(id, 'a stored message is not JSON', cause);
  }
  throw errors.corrupt(id, 'a stored message is not one JSON value');
}
