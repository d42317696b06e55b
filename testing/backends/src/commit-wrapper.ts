// A store seen through a commit of the test's own (one that records, or fails after
// landing): every other member is the store's own, bound to it.
import type { FullStore } from '@sessionkit/core';

/** `inner` with `commit` in place of its own commit. */
export function withCommit(
  inner: FullStore<unknown>,
  commit: FullStore<unknown>['commit'],
): FullStore<unknown> {
  return new Proxy(inner, {
    get(target, key) {
      if (key === 'commit') return commit;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
