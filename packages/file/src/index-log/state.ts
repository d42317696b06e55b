// Index log (index.log) in-memory state: building, applying and serializing its records.
import { randomBytes } from 'node:crypto';
import { type ListableEntry, ListIndex } from '@sessionkit/core/adapter';
import { encodeFrame } from '../format/frame.js';
import type { IndexEntryJson, IndexMeta } from '../format/records.js';
import { FORMAT_VERSION } from '../format/version.js';

export interface IndexState {
  ino: number;
  size: number;
  /**
   * The file's first frame prefix (`PREFIX_BYTES`), once read. Every rewritten index begins
   * with a random `gen` record, so a new file that got the inode number of the one read
   * before (file systems reuse them) is told apart by this, not by inode and size.
   */
  firstPrefix: Buffer | undefined;
  entries: Map<string, IndexEntryJson>;
  /**
   * Listable views of `entries`, built once per entry, in listing order (core's
   * `ListIndex`: pages, children and roots without sorting the index).
   */
  listable: ListIndex<Listable>;
}

/** An index entry as listing reads it. */
export type Listable = ListableEntry & { entry: IndexEntryJson };

export function emptyIndex(): IndexState {
  return {
    ino: 0,
    size: 0,
    firstPrefix: undefined,
    entries: new Map(),
    listable: new ListIndex<Listable>(),
  };
}

export function listableOf(entry: IndexEntryJson): Listable {
  const l: Listable = {
    id: entry.id,
    updatedAt: new Date(entry.updatedAt),
    folder: entry.folder,
    status: entry.status,
    title: entry.title,
    searchText: '',
    entry,
  };
  if (entry.parentId !== undefined) l.parentId = entry.parentId;
  if (entry.archivedAt !== undefined) l.archivedAt = new Date(entry.archivedAt);
  return l;
}

/**
 * Applies one record of a whole index file to its entries alone (the listing order is
 * built once at the end, by `buildListable`, not kept up to date record by record).
 */
export function applyEntryRecord(entries: Map<string, IndexEntryJson>, r: IndexMeta): void {
  if (r.op === 'put') entries.set(r.entry.id, r.entry);
  else if (r.op === 'del') entries.delete(r.id);
}

/**
 * Rebuilds `state.listable` from `state.entries` with one sort (core's `ListIndex.of`),
 * not one insert each: for a whole index read at once.
 */
export function buildListable(state: IndexState): void {
  state.listable = ListIndex.of(Array.from(state.entries.values(), listableOf));
}

export function applyIndexRecord(state: IndexState, r: IndexMeta): void {
  if (r.op === 'put') {
    state.entries.set(r.entry.id, r.entry);
    state.listable.set(r.entry.id, listableOf(r.entry));
  } else if (r.op === 'del') {
    state.entries.delete(r.id);
    state.listable.delete(r.id);
  }
}

export function serializeIndex(entries: Map<string, IndexEntryJson>): Buffer {
  const frames: Buffer[] = [
    encodeFrame({ v: FORMAT_VERSION, op: 'gen', id: randomBytes(12).toString('hex') }),
  ];
  for (const entry of entries.values())
    frames.push(encodeFrame({ v: FORMAT_VERSION, op: 'put', entry }));
  return Buffer.concat(frames);
}
