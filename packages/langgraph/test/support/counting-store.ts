// A store seen through counters: how many records (messages) each read returned and whether
// anything loaded a whole session, so tests can tell what a saver call read.
import type { FullStore, MessageWindowQuery } from '@sessionkit/core';

export interface ReadCounts {
  windows: number;
  recordsRead: number;
  fullLoads: number;
  commits: number;
  recordsWritten: number;
  bytesWritten: number;
}

/** `store` with every read and commit counted in `counts` (reset it between measurements). */
export function countingStore(store: FullStore<unknown>): {
  store: FullStore<unknown>;
  counts: ReadCounts;
  reset(): void;
} {
  const counts: ReadCounts = {
    windows: 0,
    recordsRead: 0,
    fullLoads: 0,
    commits: 0,
    recordsWritten: 0,
    bytesWritten: 0,
  };
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      if (key === 'loadMessageWindow' || key === 'loadMessages')
        return async (id: string, window?: MessageWindowQuery) => {
          const result = await value.call(target, id, window);
          counts.windows += 1;
          counts.recordsRead += Array.isArray(result) ? result.length : result.messages.length;
          if (window === undefined) counts.fullLoads += 1;
          return result;
        };
      if (key === 'load')
        return async (...args: unknown[]) => {
          counts.fullLoads += 1;
          return value.apply(target, args);
        };
      if (key === 'commit')
        return async (id: string, input: { append?: unknown[] }) => {
          counts.commits += 1;
          counts.recordsWritten += input.append?.length ?? 0;
          counts.bytesWritten += JSON.stringify(input.append ?? []).length;
          return value.call(target, id, input);
        };
      return value.bind(target);
    },
  });
  return {
    store: wrapped,
    counts,
    reset() {
      for (const k of Object.keys(counts) as (keyof ReadCounts)[]) counts[k] = 0;
    },
  };
}
