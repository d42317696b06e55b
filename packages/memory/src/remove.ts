// delete's semantics on a backend: the record, its bindings and follow pins go; its
// children are promoted by core's rule.
import { promotedChild, readLineage } from '@sessionkit/core/adapter';
import {
  childIds,
  linkChild,
  type MemoryBackend,
  type MemoryHeader,
  type MemoryRecord,
  putRecord,
  unlinkChild,
} from './memory-backend.js';
import { recordProblem } from './record-check.js';

/** Deletes a session with the full delete semantics; false when it does not exist. */
export function removeSession(backend: MemoryBackend, id: string): boolean {
  const b = backend;
  const record = b.records.get(id);
  if (!record) return false;
  const parent = (record.header as Partial<MemoryHeader> | undefined)?.parentId;
  const grandparentId = typeof parent === 'string' ? parent : undefined;
  b.records.delete(id);
  b.index.delete(id);
  if (grandparentId !== undefined) unlinkChild(b, grandparentId, id);
  // A corrupt record can still be deleted: read only what promotion needs, defensively.
  const raw = (record as Partial<MemoryRecord>).header as Partial<MemoryHeader> | undefined;
  const deletedHeader = { id, parentId: grandparentId } as MemoryHeader;
  if (typeof raw?.branchedAtTurn === 'number') deletedHeader.branchedAtTurn = raw.branchedAtTurn;
  const deleted = {
    header: deletedHeader,
    lineage: readLineage((record as Partial<MemoryRecord>).lineage),
  };
  for (const childId of childIds(b, id)) {
    const child = b.records.get(childId);
    if (!child || typeof child.header !== 'object' || child.header === null) continue;
    // Core's rule: re-parented to the grandparent with a re-based branch point and
    // merge base, or a root (also when a parent cycle would make it its own parent).
    const promoted = promotedChild(
      { header: child.header, lineage: readLineage(child.lineage) },
      deleted,
    );
    child.header = promoted.header;
    child.lineage = promoted.lineage;
    if (promoted.header.parentId !== undefined) linkChild(b, promoted.header.parentId, childId);
    // A corrupt child keeps its stale index entry until repair() drops it.
    if (recordProblem(childId, child) === undefined) putRecord(b, child);
  }
  b.childrenOf.delete(id);
  for (const [key, row] of b.bindings) if (row.sessionId === id) b.bindings.delete(key);
  for (const [key, follow] of b.follows) if (follow.target === id) b.follows.delete(key);
  return true;
}
