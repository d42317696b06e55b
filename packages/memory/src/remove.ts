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
  if (!b.records.has(id)) return false;
  // A corrupt record can still be deleted: read only what promotion needs, defensively
  // (the record, its header or its fields may be anything).
  const record = readable(b.records.get(id)) as Partial<MemoryRecord>;
  const raw = readable(record.header) as Partial<MemoryHeader>;
  // Stryker disable next-line ConditionalExpression: equivalent — a non-string parentId was never linked in the tree.
  const grandparentId = typeof raw.parentId === 'string' ? raw.parentId : undefined;
  b.records.delete(id);
  b.index.delete(id);
  // Stryker disable next-line ConditionalExpression: equivalent — no child set is filed under an undefined key.
  if (grandparentId !== undefined) unlinkChild(b, grandparentId, id);
  const deletedHeader = { id, parentId: grandparentId } as MemoryHeader;
  // Stryker disable next-line ConditionalExpression: equivalent — an absent and an undefined branch point both count as 0 in promotedChild.
  if (typeof raw.branchedAtTurn === 'number') deletedHeader.branchedAtTurn = raw.branchedAtTurn;
  const deleted = { header: deletedHeader, lineage: readLineage(record.lineage) };
  for (const childId of childIds(b, id)) {
    const child = b.records.get(childId);
    // An unreadable child is left exactly as it is (delete() and repair() handle it): a
    // promotion would rewrite a header nobody can read.
    if (!child || recordProblem(childId, child) !== undefined) continue;
    // Core's rule: re-parented to the grandparent with a re-based branch point and
    // merge base, or a root (also when a parent cycle would make it its own parent).
    const promoted = promotedChild(
      { header: child.header, lineage: readLineage(child.lineage) },
      deleted,
    );
    child.header = promoted.header;
    child.lineage = promoted.lineage;
    // Stryker disable next-line ConditionalExpression: equivalent — a set filed under an undefined key is never read.
    if (promoted.header.parentId !== undefined) linkChild(b, promoted.header.parentId, childId);
    putRecord(b, child);
  }
  b.childrenOf.delete(id);
  for (const [key, row] of b.bindings) if (row.sessionId === id) b.bindings.delete(key);
  for (const [key, follow] of b.follows) if (follow.target === id) b.follows.delete(key);
  return true;
}

/** `value` when it is an object, else an empty one: fields of a damaged record read as absent. */
function readable(value: unknown): object {
  return typeof value === 'object' && value !== null ? value : {};
}
