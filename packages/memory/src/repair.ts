// repair(): the listing index and the tree rebuilt from the records, with a report.
import { isDeepStrictEqual } from 'node:util';
import type { RepairReport } from '@sessionkit/core';
import { type IndexEntry, indexEntryOf, type MemoryBackend } from './backend.js';
import { recordProblem } from './codec.js';

/**
 * Rebuilds `backend.index` and `backend.childrenOf` from `backend.records`. `rebuilt` is
 * the number of records indexed; records whose header is invalid are reported in
 * `skippedCorrupt` and left out of the index (their data is left as it is);
 * `indexEntriesFixed` counts index and tree entries added, corrected or removed.
 */
export function rebuildIndex(backend: MemoryBackend): RepairReport {
  const index = new Map<string, IndexEntry>();
  const tree = new Map<string, Set<string>>();
  const skippedCorrupt: RepairReport['skippedCorrupt'] = [];
  for (const [id, record] of backend.records) {
    const problem = recordProblem(id, record);
    if (problem !== undefined) {
      skippedCorrupt.push({ id, reason: problem });
      continue;
    }
    index.set(id, indexEntryOf(record));
    const parentId = record.header.parentId;
    if (parentId !== undefined) tree.set(parentId, (tree.get(parentId) ?? new Set()).add(id));
  }
  const fixed = replaceEntries(backend.index, index) + replaceEntries(backend.childrenOf, tree);
  return { rebuilt: index.size, skippedCorrupt, indexEntriesFixed: fixed };
}

/**
 * Makes `target` hold exactly the entries of `rebuilt`; returns how many entries were
 * added, changed or removed (0 when `target` was already right).
 */
function replaceEntries<V>(target: Map<string, V>, rebuilt: Map<string, V>): number {
  let changed = 0;
  for (const [key, value] of rebuilt) {
    if (!isDeepStrictEqual(target.get(key), value)) changed++;
  }
  for (const key of target.keys()) if (!rebuilt.has(key)) changed++;
  target.clear();
  for (const [key, value] of rebuilt) target.set(key, value);
  return changed;
}
