// Whether a stored record can be used: a record edited by hand through the backend may not.
import { isSessionKitError } from '@sessionkit/core';
import { assertSaveInput, errorsFor } from '@sessionkit/core/adapter';
import type { MemoryHeader, MemoryRecord } from './memory-backend.js';

const errors = errorsFor('memory');

/** Why a record cannot be indexed, or `undefined` when it is sound. */
export function recordProblem(id: string, record: MemoryRecord): string | undefined {
  if (typeof record !== 'object' || record === null) return 'record is not an object';
  const h = record.header as Partial<MemoryHeader> | undefined;
  if (typeof h !== 'object' || h === null) return 'header is missing';
  if (h.id !== id) return `header id ${JSON.stringify(h.id)} does not match its key`;
  if (!Array.isArray(record.messages)) return 'messages is not an array';
  if (typeof record.searchText !== 'string') return 'searchText is not a string';
  if (!Array.isArray(record.events)) return 'events is not an array';
  if (record.runtimeStatus !== null && typeof record.runtimeStatus !== 'string') {
    return 'runtimeStatus is neither null nor JSON text';
  }
  for (const key of ['createdAt', 'updatedAt'] as const) {
    const v = h[key];
    if (!(v instanceof Date) || Number.isNaN(v.getTime()))
      return `header.${key} is not a valid Date`;
  }
  for (const key of ['tokenCount', 'costUsd', 'turnCount'] as const) {
    if (typeof h[key] !== 'number') return `header.${key} is not a number`;
  }
  if (typeof h.metadata !== 'object' || h.metadata === null) return 'header.metadata is missing';
  try {
    // Core's save validation covers every header field; messages are checked above.
    assertSaveInput(errors, { ...(h as MemoryHeader), messages: [], children: [] });
  } catch (e) {
    if (isSessionKitError(e))
      return `invalid header: ${e.message.replace(`${errors.prefix} `, '')}`;
    throw e;
  }
  return undefined;
}
