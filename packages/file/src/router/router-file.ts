// The session router (`router.json`): bindings of (channel, chatKey, thread) to sessions
// and follow targets, rewritten atomically under `locks/.router.lock`.

import { promises as fsp } from 'node:fs';
import type { RouterRow } from '@sessionkit/core';
import {
  bindingKey,
  compareRouterRows,
  followKey,
  nextUpdatedAt,
  type StoredRoute,
  withFileLock,
} from '@sessionkit/core/adapter';
import { FORMAT_VERSION } from '../format/version.js';
import { isEnoent } from '../io/fs-helpers.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';

/** What `router.json` holds. */
interface RouterState {
  v: number;
  bindings: Binding[];
  follows: Follow[];
  /** The last binding time handed out (times only move forward). */
  last: number;
}

interface Follow {
  channel: string;
  chatKey: string;
  target: string;
}

interface Binding {
  sessionId: string;
  channel: string;
  chatKey: string;
  thread: string;
  at: number;
}

// Tuples are told apart by the kit's router keys, as on every adapter.
const sameTuple = (b: Binding, channel: string, chatKey: string, thread: string) =>
  bindingKey(b.channel, b.chatKey, b.thread) === bindingKey(channel, chatKey, thread);
const sameChat = (f: Follow, channel: string, chatKey: string) =>
  followKey(f.channel, f.chatKey) === followKey(channel, chatKey);

async function readRouter(ctx: StoreContext): Promise<RouterState> {
  let text: string;
  try {
    text = await fsp.readFile(ctx.paths.router, 'utf8');
  } catch (e) {
    if (isEnoent(e)) return { v: FORMAT_VERSION, bindings: [], follows: [], last: 0 };
    throw e;
  }
  try {
    const state = JSON.parse(text) as RouterState;
    if (!Array.isArray(state.bindings) || !Array.isArray(state.follows)) throw new Error('shape');
    return state;
  } catch (cause) {
    throw errors.make('corrupt', `router file ${ctx.paths.router} is damaged`, { cause });
  }
}

/** Applies `fn` to the router file under its lock; rewrites it only when it changed. */
async function updateRouter(ctx: StoreContext, fn: (state: RouterState) => void): Promise<void> {
  await withFileLock(
    ctx.paths.routerLock,
    async () => {
      const state = await readRouter(ctx);
      const before = JSON.stringify(state);
      fn(state);
      const after = JSON.stringify(state);
      if (after !== before) await ctx.writeAtomic(ctx.paths.router, after);
    },
    ctx.lockOptions,
  );
}

/** A binding time strictly after every earlier one of this router (core's `nextUpdatedAt`). */
function routerNow(state: RouterState): number {
  const at = nextUpdatedAt(state.last ? new Date(state.last) : undefined).getTime();
  state.last = at;
  return at;
}

/** Binds the tuple to `sessionId`, replacing any binding of it. */
export async function bindRoute(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
  sessionId: string,
): Promise<void> {
  await updateRouter(ctx, (state) => {
    const at = routerNow(state);
    const kept = state.bindings.filter((b) => !sameTuple(b, channel, chatKey, thread));
    kept.push({ sessionId, channel, chatKey, thread, at });
    state.bindings = kept;
  });
}

/** The tuple's follow target and binding as stored (the base class resolves them). */
export async function readStoredRoute(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
): Promise<StoredRoute> {
  const state = await readRouter(ctx);
  const pin = state.follows.find((f) => sameChat(f, channel, chatKey));
  const bound = state.bindings.find((b) => sameTuple(b, channel, chatKey, thread));
  return { followTarget: pin?.target, sessionId: bound?.sessionId };
}

/** Removes the tuple's binding, if any. */
export async function unbindRoute(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
): Promise<void> {
  await updateRouter(ctx, (state) => {
    state.bindings = state.bindings.filter((b) => !sameTuple(b, channel, chatKey, thread));
  });
}

/** Sets (or with `""` clears) the follow target of `(channel, chatKey)`. */
export async function followRoute(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  target: string,
): Promise<void> {
  await updateRouter(ctx, (state) => {
    state.follows = state.follows.filter((f) => !sameChat(f, channel, chatKey));
    if (target !== '') state.follows.push({ channel, chatKey, target });
  });
}

/** Moves the tuple's binding time strictly forward, if it is bound. */
export async function touchRoute(
  ctx: StoreContext,
  channel: string,
  chatKey: string,
  thread: string,
): Promise<void> {
  await updateRouter(ctx, (state) => {
    const b = state.bindings.find((x) => sameTuple(x, channel, chatKey, thread));
    if (b) b.at = routerNow(state);
  });
}

/** The `limit` newest bindings, in core's `recent()` order (`compareRouterRows`). */
export async function recentRoutes(ctx: StoreContext, limit: number): Promise<RouterRow[]> {
  const state = await readRouter(ctx);
  return [...state.bindings]
    .map((b) => ({
      sessionId: b.sessionId,
      channel: b.channel,
      chatKey: b.chatKey,
      thread: b.thread,
      updatedAt: new Date(b.at),
    }))
    .sort(compareRouterRows)
    .slice(0, limit);
}

/** Removes the bindings to a deleted session and the follow targets that pin it. */
export async function dropSessionRoutes(ctx: StoreContext, id: string): Promise<void> {
  await updateRouter(ctx, (state) => {
    state.bindings = state.bindings.filter((b) => b.sessionId !== id);
    state.follows = state.follows.filter((f) => f.target !== id);
  });
}
