// Reading a stored record back (a record edited by hand through the backend may not be
// usable), and the session and summary values a record gives.
import type { Session, SessionSummary } from '@sessionkit/core';
import {
  assertStoredHeader,
  errorsFor,
  readLineage,
  type SessionState,
  storedHeaderProblem,
} from '@sessionkit/core/adapter';
import { childIds, type IndexEntry, type MemoryBackend, type MemoryRecord } from './backend.js';

/** The memory adapter's errors. */
export const errors = errorsFor('memory');

/** Why a record's parts other than its header cannot be used, or `undefined`. */
function shapeProblem(record: MemoryRecord): string | undefined {
  if (typeof record !== 'object' || record === null) return 'record is not an object';
  if (!Array.isArray(record.messages)) return 'messages is not an array';
  if (!Array.isArray(record.searchTexts)) return 'searchTexts is not an array';
  if (!Array.isArray(record.events)) return 'events is not an array';
  if (record.runtimeStatus !== null && typeof record.runtimeStatus !== 'string') {
    return 'runtimeStatus is neither null nor JSON text';
  }
  return undefined;
}

/** Why a record cannot be used, or `undefined` when it is sound (as `repair()` reports it). */
export function recordProblem(id: string, record: MemoryRecord): string | undefined {
  const shape = shapeProblem(record);
  if (shape !== undefined) return shape;
  // The kit's one rule for a stored header (the same every adapter applies).
  const problem = storedHeaderProblem(id, record.header);
  return problem === undefined ? undefined : `invalid header: ${problem}`;
}

/** The record of `id`; `not_found` when missing, `corrupt` when it cannot be used. */
export function getRecord(backend: MemoryBackend, id: string): MemoryRecord {
  // has(): a record damaged into null or undefined is corrupt, not missing.
  if (!backend.records.has(id)) throw errors.notFound(id);
  const record = backend.records.get(id) as MemoryRecord;
  const shape = shapeProblem(record);
  if (shape !== undefined) throw errors.corrupt(id, shape);
  assertStoredHeader(errors, id, record.header);
  return record;
}

/** The kit's state of a record. */
export function stateOf(record: MemoryRecord): SessionState {
  return {
    header: record.header,
    lineage: readLineage(record.lineage),
    messageCount: record.messages.length,
  };
}

/**
 * The full session of a record, taken now: the history array is sliced because later
 * commits change it in place (the base class then hands the caller a deep copy).
 */
export function sessionOf<M>(backend: MemoryBackend, record: MemoryRecord): Session<M> {
  return {
    ...record.header,
    messages: record.messages.slice() as M[],
    children: childIds(backend, record.header.id),
  };
}

/** The summary of an index entry (the base class hands the caller a copy). */
export function summaryOf(backend: MemoryBackend, entry: IndexEntry): SessionSummary {
  const { searchText: _searchText, ...rest } = entry;
  return { ...rest, children: childIds(backend, entry.id) };
}
