// The session router: bindings of (channel, chatKey, thread) to sessions and follow targets
// of (channel, chatKey). Arguments are checked by the base class, which applies core's resolve rule.
import type { RouterRow } from '@sessionkit/core';
import type { StoredRoute } from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';

/** Binds the tuple to `sessionId` (at a time after every binding's). Throws `not_found`. */
export async function bind(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
  sessionId: string,
): Promise<void> {
  const r = await ctx.db.query(
    ctx.statements.router.bind,
    [channel, chatKey, thread, sessionId, new Date()],
    { doing: 'bind', notFoundOnFk: sessionId },
  );
  if (r.rowCount !== 1) throw errors.notFound(sessionId);
}

/** The follow target and the binding of the tuple, in one statement (the base class resolves). */
export async function readRoute(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
): Promise<StoredRoute> {
  const r = await ctx.db.query(ctx.statements.router.resolve, [channel, chatKey, thread], {
    doing: 'resolve',
  });
  const row = r.rows[0];
  return { followTarget: row?.follow ?? undefined, sessionId: row?.bound ?? undefined };
}

/** Removes the binding (a missing one is no error). */
export async function unbind(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
): Promise<void> {
  await ctx.db.query(ctx.statements.router.unbind, [channel, chatKey, thread], { doing: 'unbind' });
}

/** Sets the follow target of `(channel, chatKey)`, or clears it for `""`. */
export async function follow(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  target: string,
): Promise<void> {
  if (target === '') {
    await ctx.db.query(ctx.statements.router.unfollow, [channel, chatKey], { doing: 'follow' });
    return;
  }
  await ctx.db.query(ctx.statements.router.follow, [channel, chatKey, target], { doing: 'follow' });
}

/** Moves the binding's time past every binding's (a missing binding is no error). */
export async function touch(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
): Promise<void> {
  await ctx.db.query(ctx.statements.router.touch, [channel, chatKey, thread, new Date()], {
    doing: 'touch',
  });
}

/** The newest `limit` bindings first. */
export async function recent(ctx: StoreContext, limit: number): Promise<RouterRow[]> {
  const r = await ctx.db.query(ctx.statements.router.recent, [limit], { doing: 'recent' });
  return r.rows.map((row) => ({
    sessionId: row.session_id,
    channel: row.channel,
    chatKey: row.chat_key,
    thread: row.thread,
    updatedAt: row.updated_at,
  }));
}
