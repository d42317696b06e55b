// The session router on its own slot `{~rt}`: bindings, follow targets, the recent order,
// and per-session reverse sets so a delete removes what names the session.
import type { RouterRow } from '@sessionkit/core';
import { bindingKey, FOLLOW_TUI, followKey, type StoredRoute } from '@sessionkit/core/adapter';
import { call } from './calls.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { SCRIPTS } from './lua/index.js';
import { confirmedCall } from './replicas.js';
import { sessionExists } from './session-io.js';

/** The prefix of the boundTo / pinnedTo sets (the scripts append a session id). */
function setPrefix(key: string): string {
  return key.slice(0, -1);
}

/**
 * Binds the tuple to an existing session. The session is checked before and after the
 * binding is written; when a delete came in between, the binding is taken back, so a
 * deleted session is never left bound. Throws `not_found`.
 */
export async function bind(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
  sessionId: string,
): Promise<void> {
  const k = ctx.keys;
  if (!(await sessionExists(ctx, sessionId))) throw errors.notFound(sessionId);
  const tuple = bindingKey(channel, chatKey, thread);
  await confirmedCall(
    ctx,
    SCRIPTS.bind,
    [k.bindings, k.recent, k.routerClock, k.boundTo(sessionId)],
    [tuple, sessionId, Date.now(), setPrefix(k.boundTo('x'))],
    'binding a chat',
  );
  if (!(await sessionExists(ctx, sessionId))) {
    await unbind(ctx, tuple, sessionId);
    throw errors.notFound(sessionId);
  }
}

/** Removes the binding of `tuple` (only while it names `sessionId`, when given). */
export async function unbind(ctx: StoreContext, tuple: string, sessionId = ''): Promise<void> {
  const k = ctx.keys;
  await confirmedCall(
    ctx,
    SCRIPTS.unbind,
    [k.bindings, k.recent],
    [tuple, setPrefix(k.boundTo('x')), sessionId],
    'unbinding a chat',
  );
}

/** The follow target and the binding of the tuple (a binding to an expired session is absent). */
export async function readRoute(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
): Promise<StoredRoute> {
  const k = ctx.keys;
  const tuple = bindingKey(channel, chatKey, thread);
  const [target, bound] = await call<[string | null, string | null]>(
    ctx,
    SCRIPTS.resolve,
    [k.follows, k.bindings],
    [followKey(channel, chatKey), tuple],
    'resolving a chat',
  );
  const live = bound !== null && (await boundSessionLives(ctx, tuple, bound));
  return { followTarget: target ?? undefined, sessionId: live ? bound : undefined };
}

/**
 * With a TTL, a bound session can expire without a delete: its binding is then treated as
 * absent and removed (only while it still names that session). Without a TTL every
 * binding names a live session (delete removes them), so nothing is read.
 */
async function boundSessionLives(
  ctx: StoreContext,
  tuple: string,
  sessionId: string,
): Promise<boolean> {
  if (ctx.ttlMs === 0 || (await sessionExists(ctx, sessionId))) return true;
  await unbind(ctx, tuple, sessionId);
  return false;
}

/** Sets or clears (`""`) the follow target of `(channel, chatKey)`. */
export async function follow(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  target: string,
): Promise<void> {
  const k = ctx.keys;
  const pins = target !== '' && target !== FOLLOW_TUI ? '1' : '0';
  await confirmedCall(
    ctx,
    SCRIPTS.follow,
    [k.follows],
    [followKey(channel, chatKey), target, setPrefix(k.pinnedTo('x')), pins],
    'following a chat',
  );
}

/** Moves an existing binding's time strictly forward. */
export async function touch(ctx: StoreContext, tuple: string): Promise<void> {
  const k = ctx.keys;
  await call(
    ctx,
    SCRIPTS.touch,
    [k.bindings, k.recent, k.routerClock],
    [tuple, Date.now()],
    'touching a chat',
  );
}

/** The newest `limit` bindings. */
export async function recent(ctx: StoreContext, limit: number): Promise<RouterRow[]> {
  const k = ctx.keys;
  const flat = await call<string[]>(
    ctx,
    SCRIPTS.recent,
    [k.recent, k.bindings],
    [limit],
    'reading recent chats',
  );
  const rows: RouterRow[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    if (!(await boundSessionLives(ctx, flat[i] as string, flat[i + 2] as string))) continue;
    const [channel, chatKey, thread] = JSON.parse(flat[i] as string) as [string, string, string];
    rows.push({
      sessionId: flat[i + 2] as string,
      channel,
      chatKey,
      thread,
      updatedAt: new Date(Number(flat[i + 1])),
    });
  }
  return rows;
}
