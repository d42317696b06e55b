// How a session's header and lineage are stored: JSON with dates as epoch milliseconds and
// a format version, read back with the kit's stored-header check so a damaged record is
// `corrupt`.
import type { HistoryLineage, SessionHeader } from '@sessionkit/core/adapter';
import { assertStoredHeader, readLineage } from '@sessionkit/core/adapter';
import { errors } from './errors.js';

/** The header format this version writes (`v` in the stored JSON). */
export const HEADER_FORMAT = 1;

const DATE_FIELDS = ['createdAt', 'updatedAt', 'archivedAt'] as const;

/**
 * The stored JSON text of a header: its fields after the format version, dates as epoch
 * ms in their places. One spread and one `JSON.stringify` (it leaves `undefined` fields
 * out), with no walk over the entries: it runs on every turn.
 */
export function encodeHeader(header: SessionHeader): string {
  return JSON.stringify({
    v: HEADER_FORMAT,
    ...header,
    createdAt: header.createdAt.getTime(),
    updatedAt: header.updatedAt.getTime(),
    archivedAt: header.archivedAt?.getTime(),
  });
}

/**
 * The header stored for `id`, checked by the kit's `assertStoredHeader` (the one rule of
 * every adapter). Throws `corrupt` (naming the problem) when the text is not a header of
 * this id in this format.
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
  const { v, ...fields } = raw as Record<string, unknown>;
  if (v !== HEADER_FORMAT) throw errors.corrupt(id, `unknown header format ${JSON.stringify(v)}`);
  for (const key of DATE_FIELDS) {
    const value = fields[key];
    if (value === undefined) continue;
    if (typeof value !== 'number') throw errors.corrupt(id, `header.${key} is not a time`);
    fields[key] = new Date(value);
  }
  return assertStoredHeader(errors, id, fields);
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
