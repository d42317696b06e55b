// repair(): the listing index and the tree rebuilt from the records, with a report.
import { isDeepStrictEqual } from 'node:util';
import type { RepairReport } from '@sessionkit/core';
import { type IndexEntry, indexEntryOf, type MemoryBackend } from './memory-backend.js';
import { recordProblem } from './record-check.js';

/**
 * Rebuilds `backend.index` and `backend.childrenOf` from `backend.records`. `rebuilt` is
 * the number of records indexed; records whose header is invalid are reported in
 * `skippedCorrupt` and left out of the index (their data is left as it is);
 * `indexEntriesFixed` counts index and tree entries added, corrected or removed.
 */
export function rebuildIndex(backend: MemoryBackend): RepairReport {
  const b = backend;
  const index = new Map<string, IndexEntry>();
  const tree = new Map<string, Set<string>>();
  const skippedCorrupt: RepairReport['skippedCorrupt'] = [];
  for (const [id, record] of b.records) {
    const problem = recordProblem(id, record);
    if (problem !== undefined) {
      skippedCorrupt.push({ id, reason: problem });
      continue;
    }
    index.set(id, indexEntryOf(record));
    const parentId = record.header.parentId;
    if (parentId !== undefined) {
      let set = tree.get(parentId);
      if (!set) {
        set = new Set();
        tree.set(parentId, set);
      }
      set.add(id);
    }
  }
  let fixed = 0;
  for (const [id, entry] of index) {
    if (!isDeepStrictEqual(b.index.get(id), entry)) fixed++;
  }
  for (const id of b.index.keys()) if (!index.has(id)) fixed++;
  for (const [id, set] of tree) {
    if (!sameIds(b.childrenOf.get(id), set)) fixed++;
  }
  for (const id of b.childrenOf.keys()) if (!tree.has(id)) fixed++;
  b.index.clear();
  for (const [id, entry] of index) b.index.set(id, entry);
  b.childrenOf.clear();
  for (const [id, set] of tree) b.childrenOf.set(id, set);
  return { rebuilt: index.size, skippedCorrupt, indexEntriesFixed: fixed };
}

function sameIds(a: Set<string> | undefined, b: Set<string>): boolean {
  if (!a || a.size !== b.size) return false;
  for (const id of b) if (!a.has(id)) return false;
  return true;
}
