// Runs a test body once per backend, each on a store of its own (fresh data), and skips
// loudly what cannot run here: a backend whose service is missing (a failure under CI),
// and the tests that need commit's `truncate` and `operationId` on an adapter that does
// not implement them yet.
import type { FullStore } from '@sessionkit/core';
import { type BackendName, commitRejection, testBackend } from '@sessionkit/test-backends';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import { SessionKitSession, type SessionKitSessionOptions } from '../../src/index.js';

export type AnyStore = FullStore<unknown>;

/** The backends this package's tests run on. */
const BACKENDS: readonly BackendName[] = ['memory', 'file', 'postgres', 'redis', 's3'];

export interface BackendContext {
  readonly name: BackendName;
  /** The backend's store for this describe block (each test uses new session ids). */
  store(): AnyStore;
  /** A second store instance over the same data. */
  peer(): Promise<AnyStore>;
  /** A SessionKitSession on `store()` with a new session id unless one is given. */
  session(options?: Omit<SessionKitSessionOptions, 'store'>): SessionKitSession;
  /**
   * Skips the tests of the calling `describe` block when the store's commit does not
   * take `truncate` and `operationId` (what popItem, clearSession, transactions and
   * mutations need); getItems and addItems work on any store.
   */
  requiresHistoryWrites(): void;
}

/** `describe(\`${backend} › ${title}\`, …)` for every backend. */
export function describeOnBackends(title: string, body: (ctx: BackendContext) => void): void {
  for (const name of BACKENDS) {
    describe(`${name} › ${title}`, () => {
      const backend = testBackend(name);
      let store: AnyStore | undefined;
      let unavailable = false;
      let noHistoryWrites: string | undefined;
      beforeAll(async () => {
        unavailable = !(await backend.available(`the openai-agents tests on ${name} are skipped`));
        if (unavailable) return;
        store = await backend.fresh();
        noHistoryWrites = await commitRejection(store, { operationId: 'probe', truncate: 0 });
        if (noHistoryWrites !== undefined) {
          console.warn(
            `\n!!! SKIPPED on ${name}: the openai-agents "${title}" tests that pop, clear, transact or rewrite: ${noHistoryWrites}\n`,
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
      const current = (): AnyStore => {
        if (store === undefined) throw new Error(`no ${name} store`);
        return store;
      };
      body({
        name,
        store: current,
        peer: () => backend.peer(current()),
        session: (options = {}) => new SessionKitSession({ ...options, store: current() }),
        requiresHistoryWrites: () =>
          beforeEach((ctx) => {
            if (noHistoryWrites !== undefined) ctx.skip();
          }),
      });
    });
  }
}
