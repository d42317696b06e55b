// save: the write that replaces a whole session. The header it returns is core's
// `savedHeader` (the SQL enforces the same rule on the stored row).
import type { Session } from '@sessionkit/core';
import {
  extendsHistory,
  nextWriteTime,
  rootLineage,
  type SavedOver,
  savedHeader,
  savedLineage,
} from '@sessionkit/core/adapter';
import { parseBodies } from './codec.js';
import { runCommit } from './commit.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { searchChunksIn } from './search-rows.js';
import type { SaveLockRow } from './statements/sessions.js';
import { queryOn } from './transaction.js';

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
export async function saveRecord(
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
    const storedHeader = storedHeaderOf(session.id, stored);
    const now = nextWriteTime(errors, session.id, storedHeader.updatedAt);
    const header = savedHeader(storedHeader, session, now);
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
