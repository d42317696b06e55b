import type { Store } from '../contracts.js';
import type { Message } from '../types.js';

/** Options of the generic `enforceMax`. */
export interface EnforceMaxOptions {
  /** Page size of each `list` call while scanning. Default 500 (at most 1000). */
  pageSize?: number;
  /** Folder for the private id spool. Default: the OS temp folder. */
  tmpDir?: string;
}

/**
 * Keeps the newest `max` root sessions and deletes the older roots. TODO(helper): implement.
 */
export async function enforceMax<M = Message>(
  _store: Store<M>,
  _max: number,
  _options: EnforceMaxOptions = {},
): Promise<number> {
  throw new Error('not implemented');
}
