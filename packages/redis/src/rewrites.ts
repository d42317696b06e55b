// save() and merge(): writes that replace a whole history. Both compute the new header with
// core's kit from a snapshot and write it only if the write version has not moved since.
import type { Session } from '@sessionkit/core';
import {
  extendsHistory,
  parentToMergeInto,
  planMerge,
  savedHeader,
  savedLineage,
  searchTextOf,
} from '@sessionkit/core/adapter';
import { type StoreContext, serialWrite } from './context.js';
import { errors } from './errors.js';
import { readSnapshot } from './reads.js';
import { writeRecord } from './session-io.js';
import type { StateCache } from './state-cache.js';
import { writeToken } from './write-ledger.js';

/** Attempts of a merge whose parent keeps changing under it. */
const MAX_MERGE_ATTEMPTS = 20;

/** save(session) (validated by the caller): the stored header and messages replaced. */
export async function saveSession(
  ctx: StoreContext,
  cache: StateCache,
  session: Session<unknown>,
): Promise<Session<unknown>> {
  const id = session.id;
  const stored = await readSnapshot(ctx, id, 0, -1);
  if (session.revision !== stored.header.revision) {
    throw errors.conflict(id, session.revision, stored.header.revision);
  }
  const header = savedHeader(stored.header, session);
  const texts = session.messages.map((m) => JSON.stringify(m));
  const lineage = savedLineage(
    stored.lineage,
    extendsHistory(stored.messageTexts, session.messages, true),
  );
  const outcome = await writeRecord(ctx, {
    id,
    token: writeToken(),
    expected: stored,
    header,
    lineage,
    mode: 'replace',
    messages: texts,
    searchText: searchTextOf(session.messages),
    messageCount: texts.length,
  });
  if (outcome.kind === 'missing') throw errors.notFound(id);
  if (outcome.kind === 'moved') {
    cache.set(id, outcome.current);
    throw errors.conflict(id, session.revision, outcome.current.header.revision);
  }
  cache.set(id, {
    header,
    lineage,
    messageCount: texts.length,
    life: stored.life,
    version: outcome.version,
  });
  return { ...header, messages: JSON.parse(`[${texts.join(',')}]`) as unknown[], children: [] };
}

/**
 * merge(childId): the parent fast-forwarded to the child's messages as core's `planMerge`
 * decides. The child is read in one snapshot; the parent's write is conditional on the
 * write version the plan was made from, so concurrent merges into one parent are serialised
 * (the later one plans again and sees the first). Returns the parent's id.
 */
export async function mergeSession(
  ctx: StoreContext,
  cache: StateCache,
  childId: string,
): Promise<string> {
  const child = await readSnapshot(ctx, childId, 0, -1, true);
  const parentId = parentToMergeInto(errors, child.header);
  return serialWrite(ctx, parentId, () => mergeInto(ctx, cache, parentId, child));
}

/** The merge's write loop (`mergeSession`), run after this store's earlier writes of the parent. */
async function mergeInto(
  ctx: StoreContext,
  cache: StateCache,
  parentId: string,
  child: Awaited<ReturnType<typeof readSnapshot>>,
): Promise<string> {
  const token = writeToken();
  for (let attempt = 0; attempt < MAX_MERGE_ATTEMPTS; attempt++) {
    const parent = await readSnapshot(ctx, parentId, 0, 'none');
    const plan = planMerge(
      errors,
      { header: parent.header, lineage: parent.lineage, messageCount: parent.messageCount },
      { header: child.header, lineage: child.lineage },
    );
    const outcome = await writeRecord(ctx, {
      id: parentId,
      token,
      expected: parent,
      header: plan.header,
      lineage: plan.lineage,
      mode: 'replace',
      messages: child.messageTexts,
      searchText: child.searchText ?? '',
      messageCount: child.messageTexts.length,
    });
    if (outcome.kind === 'missing') throw errors.notFound(parentId);
    if (outcome.kind === 'written') {
      cache.set(parentId, {
        header: plan.header,
        lineage: plan.lineage,
        messageCount: child.messageTexts.length,
        life: parent.life,
        version: outcome.version,
      });
      return parentId;
    }
  }
  throw errors.unavailable(`merge into session "${parentId}" kept losing races with other writers`);
}
