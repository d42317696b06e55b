// The session router on a backend: bindings and follow targets under the kit's keys.
import type { RouterRow } from '@sessionkit/core';
import { compareRouterRows, nextUpdatedAt, type StoredRoute } from '@sessionkit/core/adapter';
import { bindingKey, followKey, type MemoryBackend } from './backend.js';

/** A router time strictly after every one handed out on `backend`, so `recent()` keeps call order. */
function routerNow(backend: MemoryBackend): Date {
  const at = nextUpdatedAt(backend.lastRouterUpdate);
  backend.lastRouterUpdate = at;
  return new Date(at.getTime());
}

/** Binds the tuple to `sessionId` (which the caller checked exists), the time now. */
export function bindRoute(
  backend: MemoryBackend,
  channel: string,
  chatKey: string,
  thread: string,
  sessionId: string,
): void {
  const updatedAt = routerNow(backend);
  backend.bindings.set(bindingKey(channel, chatKey, thread), {
    sessionId,
    channel,
    chatKey,
    thread,
    updatedAt,
  });
}

/** The follow target and binding of the tuple. */
export function readRoute(
  backend: MemoryBackend,
  channel: string,
  chatKey: string,
  thread: string,
): StoredRoute {
  return {
    followTarget: backend.follows.get(followKey(channel, chatKey))?.target,
    sessionId: backend.bindings.get(bindingKey(channel, chatKey, thread))?.sessionId,
  };
}

/** Sets the follow target of `(channel, chatKey)`; `""` clears it. */
export function followRoute(
  backend: MemoryBackend,
  channel: string,
  chatKey: string,
  target: string,
): void {
  const key = followKey(channel, chatKey);
  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent — resolveRoute treats a "" target as none, and targets are only observable through resolve.
  if (target === '') backend.follows.delete(key);
  else backend.follows.set(key, { channel, chatKey, target });
}

/** Moves the binding's time strictly forward, if there is one. */
export function touchRoute(
  backend: MemoryBackend,
  channel: string,
  chatKey: string,
  thread: string,
): void {
  const binding = backend.bindings.get(bindingKey(channel, chatKey, thread));
  if (binding) binding.updatedAt = routerNow(backend);
}

/** The newest `limit` bindings, copied now (`touchRoute` moves a row's time in place). */
export function recentRoutes(backend: MemoryBackend, limit: number): RouterRow[] {
  const rows = [...backend.bindings.values()].map((row) => ({ ...row }));
  return rows.sort(compareRouterRows).slice(0, limit);
}
