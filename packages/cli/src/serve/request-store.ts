// The store as one request sees it: read methods only, each call timed for the
// `Server-Timing` header, and no new call once the client has gone.
import type { Store } from '@sessionkit/core';

/** The store methods a read-only viewer may call. Every other method throws. */
const READ_METHODS = new Set([
  'list',
  'load',
  'loadMessages',
  'loadMessageWindow',
  'loadRuntimeStatus',
  'events',
]);

/** Time spent in store calls during one request. */
export interface StoreTiming {
  calls: number;
  /** Sum of the calls' durations (ms); parallel calls overlap. */
  ms: number;
}

function abortError(): Error {
  const e = new Error('the client closed the connection');
  e.name = 'AbortError';
  return e;
}

/**
 * A view of `store` for one request. Read calls go through, timed into `timing`; once
 * `signal` fires (the client disconnected) a call rejects with an `AbortError` instead of
 * starting. Write methods throw: the viewer never changes a store. The capability guards
 * answer as for `store` (every method is still a function).
 *
 * The one place to hand `signal` to the store: once core's long calls accept a trailing
 * `{ signal }` (DESIGN, "Every store call that can take long accepts `{ signal }`"),
 * append it to `args` here, and an abandoned request stops its store call too.
 */
export function requestStore<M>(
  store: Store<M>,
  signal: AbortSignal,
  timing: StoreTiming,
): Store<M> {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      if (!READ_METHODS.has(key)) {
        return () => {
          throw new Error(`the viewer is read-only: store.${key} is not called`);
        };
      }
      return async (...args: unknown[]) => {
        if (signal.aborted) throw abortError();
        const started = performance.now();
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          timing.calls++;
          timing.ms += performance.now() - started;
        }
      };
    },
  });
}
