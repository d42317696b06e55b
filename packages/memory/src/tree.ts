// The tree: branch, clone and merge by the kit's plans, and delete's semantics (the
// record, its bindings and follow pins go; its children are promoted by core's rule).
import { newSessionId } from '@sessionkit/core';
import {
  mergeTarget,
  planBranch,
  planClone,
  planMergeInto,
  planPromotions,
  readLineage,
} from '@sessionkit/core/adapter';
import {
  childIds,
  insertNewRecord,
  linkChild,
  type MemoryBackend,
  type MemoryHeader,
  type MemoryRecord,
  putRecord,
  unlinkChild,
} from './backend.js';
import { errors, getRecord, recordProblem, stateOf } from './codec.js';

/** A new branch of `parentId` at `atTurn` messages (`planBranch`). */
export function branchRecord(
  backend: MemoryBackend,
  parentId: string,
  atTurn: number,
): MemoryRecord {
  const parent = getRecord(backend, parentId);
  const state = planBranch(errors, stateOf(parent), freshId(backend), atTurn);
  backend.stats.messageBodyReads++;
  const messages = structuredClone(parent.messages.slice(0, atTurn));
  const texts = parent.searchTexts.slice(0, atTurn);
  return insertNewRecord(backend, state.header, messages, state.lineage, texts);
}

/** An independent copy of `id` (`planClone`). */
export function cloneRecord(backend: MemoryBackend, id: string): MemoryRecord {
  const source = getRecord(backend, id);
  const state = planClone(stateOf(source), freshId(backend));
  backend.stats.messageBodyReads++;
  // The copy's texts are the source's: no need to lower-case the whole history again.
  const texts = source.searchTexts.slice();
  return insertNewRecord(
    backend,
    state.header,
    structuredClone(source.messages),
    state.lineage,
    texts,
  );
}

/** Merges `childId` into its parent (`planMergeInto`); returns the parent's record. */
export function mergeRecord(backend: MemoryBackend, childId: string): MemoryRecord {
  const child = getRecord(backend, childId);
  const childState = stateOf(child);
  const parent = getRecord(backend, mergeTarget(errors, childState));
  const next = planMergeInto(errors, stateOf(parent), childState);
  backend.stats.messageBodyReads++;
  parent.header = next.header;
  parent.lineage = next.lineage;
  parent.messages = structuredClone(child.messages);
  parent.searchTexts = child.searchTexts.slice();
  putRecord(backend, parent);
  return parent;
}

function freshId(backend: MemoryBackend): string {
  let id = newSessionId();
  // Stryker disable next-line ConditionalExpression: a fresh time-sortable random id never collides in practice; the loop is a guard no test can reach.
  while (backend.records.has(id)) id = newSessionId();
  return id;
}

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
  // An unreadable child is left exactly as it is (delete() and repair() handle it): a
  // promotion would rewrite a header nobody can read.
  const children: MemoryRecord[] = [];
  for (const childId of childIds(b, id)) {
    const child = b.records.get(childId);
    if (child && recordProblem(childId, child) === undefined) children.push(child);
  }
  // Core's rule: re-parented to the grandparent with a re-based branch point and merge
  // base, or a root (also when a parent cycle would make it its own parent).
  const promoted = planPromotions(
    deleted,
    children.map((c) => ({
      header: c.header,
      lineage: readLineage(c.lineage),
      messageCount: c.messages.length,
    })),
  );
  children.forEach((child, i) => {
    const next = promoted[i] as (typeof promoted)[number];
    child.header = next.header;
    child.lineage = next.lineage;
    // Stryker disable next-line ConditionalExpression: equivalent — a set filed under an undefined key is never read.
    if (next.header.parentId !== undefined) linkChild(b, next.header.parentId, child.header.id);
    putRecord(b, child);
  });
  b.childrenOf.delete(id);
  for (const [key, row] of b.bindings) if (row.sessionId === id) b.bindings.delete(key);
  for (const [key, follow] of b.follows) if (follow.target === id) b.follows.delete(key);
  return true;
}

/** `value` when it is an object, else an empty one: fields of a damaged record read as absent. */
function readable(value: unknown): object {
  return typeof value === 'object' && value !== null ? value : {};
}
