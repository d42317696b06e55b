// branch and clone: a new session copied from a source inside one transaction, with
// core's header (branchHeader / cloneHeader) and lineage (branchedLineage / rootLineage).
import type { Session } from '@sessionkit/core';
import { newSessionId } from '@sessionkit/core';
import {
  assertBranchPoint,
  branchedLineage,
  branchHeader,
  cloneHeader,
  rootLineage,
} from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { lineageOf, lineageParams } from './lineage.js';
import { headerOf } from './lineage-writes.js';
import { parseMessageRows, summaryOf } from './rows.js';
import { searchChunksIn, titleSearchText } from './search-rows.js';
import { queryOn } from './transaction.js';

/**
 * Branch (`atTurn` given: the first `atTurn` messages) or clone (`atTurn` undefined: all
 * of them) of `sourceId`, in one transaction: the source is read under a share lock, the
 * message rows are copied inside PostgreSQL, the pending search rows computed from the
 * copied messages (a chunk of the source may straddle the branch point). Throws `not_found`,
 * `invalid_argument` (atTurn past the source's messages), `unavailable`.
 */
export function copySession(
  ctx: StoreContext,
  kind: 'branch' | 'clone',
  sourceId: string,
  atTurn: number | undefined,
): Promise<Session<unknown>> {
  const q = ctx.statements.sessions;
  return ctx.db.tx(kind, async (c) => {
    const row = (await queryOn(c, q.lockCopySource, [sourceId])).rows[0];
    if (!row) throw errors.notFound(sourceId);
    const source = summaryOf(row);
    // Core's lineage rules: a branch is based on the parent as it is now; a clone is a root.
    const lineage =
      kind === 'branch' ? branchedLineage(headerOf(source), lineageOf(row)) : rootLineage();
    if (atTurn !== undefined) assertBranchPoint(errors, sourceId, atTurn, source.messageCount);
    const upTo = atTurn ?? source.messageCount;
    // Core's rules for the new header (fields, counters, state, mode, metadata).
    const now = new Date();
    const header =
      atTurn !== undefined
        ? branchHeader(headerOf(source), newSessionId(), atTurn, now)
        : cloneHeader(headerOf(source), newSessionId(), now);
    const id = header.id;
    const title = titleSearchText(ctx.search.scope, header.title);
    ctx.stats.messageBodyReads++;
    const r = await queryOn(c, q.insertCopy, [
      id,
      header.title,
      header.folder,
      header.parentId ?? null,
      now,
      header.model,
      header.provider,
      header.tokenCount,
      header.costUsd,
      header.turnCount,
      JSON.stringify(header.metadata),
      header.status,
      header.branchedAtTurn ?? null,
      header.mode ?? null,
      header.state === undefined ? null : JSON.stringify(header.state),
      upTo,
      sourceId,
      ...lineageParams(lineage),
      title,
    ]);
    const messages = parseMessageRows(sourceId, r.rows);
    const rows = searchChunksIn(ctx.search.scope, messages);
    if (title !== '') {
      rows.seqs.push(-1);
      rows.nexts.push(-1);
      rows.texts.push(title);
    }
    if (rows.seqs.length > 0) {
      await queryOn(c, q.insertPending, [id, rows.seqs, rows.nexts, rows.texts]);
      ctx.search.noteWrite();
    }
    ctx.upkeep.noteSessions(1);
    return { ...header, messages, children: [] };
  });
}
