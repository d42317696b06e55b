// Whether a stored record can be used: a record edited by hand through the backend may not.
import { assertSaveInput, errorsFor } from '@sessionkit/core/adapter';
import type { MemoryHeader, MemoryRecord } from './memory-backend.js';

const errors = errorsFor('memory');

/** Fields every stored header has, beyond those `save` input requires. */
const STORED_HEADER_FIELDS = [
  'createdAt',
  'updatedAt',
  'tokenCount',
  'costUsd',
  'turnCount',
  'metadata',
] as const;

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
  // Save input may leave these out (defaults); a stored header always has them.
  const missing = STORED_HEADER_FIELDS.find((key) => h[key] === undefined);
  if (missing !== undefined) return `header.${missing} is missing`;
  try {
    // Core's save validation judges every header field (types, ranges, dates, text caps);
    // messages are checked above.
    // Stryker disable next-line ArrayDeclaration: equivalent — the placeholders are never stored or read.
    assertSaveInput(errors, { ...(h as MemoryHeader), messages: [], children: [] });
  } catch (e) {
    // assertSaveInput throws only SessionKitErrors; the reason drops their adapter prefix.
    return `invalid header: ${(e as Error).message.replace(`${errors.prefix} `, '')}`;
  }
  return undefined;
}
