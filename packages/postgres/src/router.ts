// The session router: bindings of (channel, chatKey, thread) to sessions and follow targets
// of (channel, chatKey). Arguments are checked by the store; the resolve rule is core's.
import type { RouterRow } from '@sessionkit/core';
import { resolveRoute } from '@sessionkit/core/adapter';
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

/** The session for the tuple by core's `resolveRoute`, or `""`. */
export async function resolve(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
  liveSessionId: string,
): Promise<string> {
  const r = await ctx.db.query(ctx.statements.router.resolve, [channel, chatKey, thread], {
    doing: 'resolve',
  });
  const row = r.rows[0];
  return resolveRoute(row?.follow ?? undefined, liveSessionId, row?.bound ?? undefined);
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
