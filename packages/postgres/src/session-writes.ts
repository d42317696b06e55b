// create and save: the writes that store a whole session. The header `save` returns is
// core's `savedHeader` (the SQL enforces the same rule on the stored row).
import type { Session } from '@sessionkit/core';
import {
  createdLineage,
  extendsHistory,
  type HistoryLineage,
  type prepareCreate,
  rootLineage,
  type SavedOver,
  savedHeader,
  savedLineage,
} from '@sessionkit/core/adapter';
import { runCommit } from './commit.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { lineageParams } from './lineage.js';
import { parentLineage } from './lineage-writes.js';
import { parseBodies } from './rows.js';
import { searchChunksIn, titleSearchText } from './search-rows.js';
import type { SaveLockRow } from './statements/sessions.js';
import { queryOn } from './transaction.js';

/** A validated new session (core's `prepareCreate`). */
type Prepared = ReturnType<typeof prepareCreate>;

/**
 * Stores `p` at revision 1 in one statement (header, message and search rows); with a
 * parent (an import restoring a tree) in a transaction that reads the parent's lineage for
 * core's `createdLineage`. Returns the stored session. Throws `exists`, `unavailable`.
 */
export async function createSession(ctx: StoreContext, p: Prepared): Promise<Session<unknown>> {
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

/** The stored header fields core's `savedHeader` keeps or moves forward. */
function storedHeaderOf(id: string, row: SaveLockRow): SavedOver {
  const header: SavedOver = {
    id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    revision: Number(row.revision),
  };
  if (row.parent_id !== null) header.parentId = row.parent_id;
  if (row.branched_at_turn !== null) header.branchedAtTurn = row.branched_at_turn;
  return header;
}

/**
 * Replaces the stored session in one transaction when `session.revision` is the stored
 * one (validated by the caller): core's `savedLineage` decides whether the history was
 * rewritten (compared as JSON text under the row lock), sk_commit writes, and the result
 * is core's `savedHeader` with the children and the caller's messages. Throws
 * `not_found`, `conflict`, `unavailable`.
 */
export async function saveSession(
  ctx: StoreContext,
  session: Session<unknown>,
): Promise<Session<unknown>> {
  const bodies = session.messages.map((m) => JSON.stringify(m));
  const q = ctx.statements.sessions;
  const { header, children } = await ctx.db.tx('save', async (c) => {
    const stored = (await queryOn(c, q.lockForSave, [session.id])).rows[0];
    if (!stored) throw errors.notFound(session.id);
    if (Number(stored.revision) !== session.revision) {
      throw errors.conflict(session.id, session.revision, Number(stored.revision));
    }
    let extended = false;
    if (bodies.length >= stored.message_count) {
      ctx.stats.messageBodyReads++;
      const old = await queryOn(c, q.messageBodies, [session.id]);
      extended = extendsHistory(
        old.rows.map((r) => r.body),
        session.messages,
        true,
      );
    }
    const now = new Date();
    const header = savedHeader(storedHeaderOf(session.id, stored), session, now);
    const row = await runCommit(
      ctx,
      {
        id: session.id,
        expectedRevision: session.revision,
        now,
        replace: true,
        rewrite: savedLineage(rootLineage(), extended).rewrites !== 0,
        bodies,
        search: searchChunksIn(ctx.search.scope, session.messages),
        title: header.title,
        indexTitle: ctx.search.scope !== 'none',
        folder: header.folder,
        status: header.status,
        model: header.model,
        provider: header.provider,
        tokenCount: header.tokenCount,
        costUsd: header.costUsd,
        turnCount: header.turnCount,
        metaReplace: true,
        metaSet: JSON.stringify(header.metadata),
        stateSet: true,
        state: header.state === undefined ? null : JSON.stringify(header.state),
        archivedSet: true,
        archived: header.archivedAt ?? null,
        modeSet: true,
        mode: header.mode ?? null,
        wantHeader: true,
      },
      c,
    );
    return { header, children: row.children ?? [] };
  });
  return { ...header, messages: parseBodies(session.id, bodies), children };
}
