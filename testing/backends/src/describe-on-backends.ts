// Runs a vitest body once per backend, each on a store of its own (fresh data), and skips
// loudly what cannot run here: a backend whose service is missing (a failure under CI), and
// the tests that need commit options an adapter does not implement yet, found by trying
// them (never by the adapter's name).
import type { CommitInput, FullStore } from '@sessionkit/core';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import type { BackendName } from './backend.js';
import { BACKEND_NAMES, testBackend } from './backends.js';
import { commitRejection } from './commit-probe.js';

/** What a body gets for one backend. */
export interface BackendSuite {
  readonly name: BackendName;
  /** The backend's store for this describe block (tests use new session ids). */
  store(): FullStore<unknown>;
  /** A second store instance over the same data, as another process opens it. */
  peer(): Promise<FullStore<unknown>>;
  /**
   * Skips the tests of the calling `describe` block when the store's commit rejects the
   * options of `DescribeOnBackendsOptions.commitOptions` (the skip was announced once).
   */
  requiresCommitOptions(): void;
}

/** Options of `describeOnBackends`. */
export interface DescribeOnBackendsOptions {
  /** The package whose tests these are, for the skip warnings (`"ai-sdk"`). */
  package: string;
  /** The backends to run on. Default: every one (`BACKEND_NAMES`). */
  backends?: readonly BackendName[] | undefined;
  /** The commit options the `requiresCommitOptions` tests need, tried once per backend. */
  commitOptions: CommitInput<unknown>;
  /** Which tests need them, for the skip warning (`"that write chats"`). */
  needing: string;
}

/** `describe(\`${backend} › ${title}\`, …)` for each backend, `body` given its suite. */
export function describeOnBackends(
  options: DescribeOnBackendsOptions,
  title: string,
  body: (suite: BackendSuite) => void,
): void {
  for (const name of options.backends ?? BACKEND_NAMES) {
    describe(`${name} › ${title}`, () => {
      const backend = testBackend(name);
      let store: FullStore<unknown> | undefined;
      let unavailable = false;
      let rejection: string | undefined;
      beforeAll(async () => {
        unavailable = !(await backend.available(
          `the ${options.package} tests on ${name} are skipped`,
        ));
        if (unavailable) return;
        store = await backend.fresh();
        rejection = await commitRejection(store, options.commitOptions);
        if (rejection !== undefined) {
          console.warn(
            `\n!!! SKIPPED on ${name}: the ${options.package} "${title}" tests ${options.needing}: ${rejection}\n`,
          );
        }
      });
      afterAll(async () => {
        if (store !== undefined) await backend.dispose(store);
        await backend.stop();
      });
      beforeEach((ctx) => {
        if (unavailable) ctx.skip();
      });
      const current = (): FullStore<unknown> => {
        if (store === undefined) throw new Error(`no ${name} store`);
        return store;
      };
      body({
        name,
        store: current,
        peer: () => backend.peer(current()),
        requiresCommitOptions: () =>
          beforeEach((ctx) => {
            if (rejection !== undefined) ctx.skip();
          }),
      });
    });
  }
}
