// create: one statement storing a whole new session (header, message and search rows).
import type { Session } from '@sessionkit/core';
import {
  createdLineage,
  type HistoryLineage,
  type prepareCreate,
  rootLineage,
} from '@sessionkit/core/adapter';
import { parseBodies } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { lineageParams } from './lineage.js';
import { searchChunksIn, titleSearchText } from './search-rows.js';
import { queryOn } from './transaction.js';
import { parentLineage } from './tree.js';

/** A validated new session (core's `prepareCreate`). */
type Prepared = ReturnType<typeof prepareCreate>;

/**
 * Stores `p` at revision 1 in one statement (header, message and search rows); with a
 * parent (an import restoring a tree) in a transaction that reads the parent's lineage for
 * core's `createdLineage`. Returns the stored session. Throws `exists`, `unavailable`.
 */
export async function createRecord(ctx: StoreContext, p: Prepared): Promise<Session<unknown>> {
  const bodies = p.messages.map((m) => JSON.stringify(m));
  const search = searchChunksIn(ctx.search.scope, p.messages);
  const titleText = titleSearchText(ctx.search.scope, p.title);
  const { messages: _m, children: _c, ...header } = p;
  const statement = ctx.statements.sessions.create;
  const values = (lineage: HistoryLineage) => [
    p.id,
    p.title,
    p.folder,
    p.parentId ?? null,
    p.createdAt,
    p.updatedAt,
    p.model,
    p.provider,
    p.tokenCount,
    p.costUsd,
    p.turnCount,
    JSON.stringify(p.metadata),
    p.status,
    p.branchedAtTurn ?? null,
    p.archivedAt ?? null,
    p.mode ?? null,
    p.state === undefined ? null : JSON.stringify(p.state),
    p.messages.length,
    bodies,
    search.seqs,
    search.texts,
    titleText,
    ...lineageParams(lineage),
    search.nexts,
  ];
  const parentId = p.parentId;
  const r =
    parentId === undefined
      ? await ctx.db.query(statement, values(rootLineage()), { doing: 'create' })
      : await ctx.db.tx('create', async (c) => {
          const lineage = createdLineage(header, await parentLineage(c, ctx.statements, parentId));
          return queryOn(c, statement, values(lineage));
        });
  const row = r.rows[0];
  if (row?.created !== 1) throw errors.exists(p.id);
  // The search rows went to search_pending: have the indexer take them shortly.
  if (search.seqs.length > 0 || titleText !== '') ctx.search.noteWrite();
  ctx.upkeep.noteSessions(1);
  return { ...p, messages: parseBodies(p.id, bodies), children: row.children };
}
