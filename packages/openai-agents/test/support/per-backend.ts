// Runs a test body once per backend (see @sessionkit/test-backends' describeOnBackends),
// with a SessionKitSession factory; the tests that pop, clear, transact or rewrite skip
// loudly on an adapter whose commit does not take `truncate` and `operationId` yet.
import type { FullStore } from '@sessionkit/core';
import {
  type BackendName,
  type BackendSuite,
  describeOnBackends as describeOnTestBackends,
} from '@sessionkit/test-backends';
import { SessionKitSession, type SessionKitSessionOptions } from '../../src/index.js';

export type AnyStore = FullStore<unknown>;

/** The backends this package's tests run on. */
const BACKENDS: readonly BackendName[] = ['memory', 'file', 'postgres', 'redis', 's3'];

export interface BackendContext extends Omit<BackendSuite, 'requiresCommitOptions'> {
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
  describeOnTestBackends(
    {
      package: 'openai-agents',
      backends: BACKENDS,
      commitOptions: { operationId: 'probe', truncate: 0 },
      needing: 'that pop, clear, transact or rewrite',
    },
    title,
    ({ requiresCommitOptions, ...suite }) =>
      body({
        ...suite,
        session: (options = {}) => new SessionKitSession({ ...options, store: suite.store() }),
        requiresHistoryWrites: requiresCommitOptions,
      }),
  );
}
