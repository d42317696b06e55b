// Runs a test body once per backend of @sessionkit/test-backends (memory, file, PostgreSQL,
// Redis, Redis Cluster, S3), with a chat store factory; the tests that write chats skip
// loudly on an adapter whose commit does not take `operationId` and `truncate` yet (every
// chat write carries an operation id, and a continuation truncates).
import type { FullStore } from '@sessionkit/core';
import {
  type BackendSuite,
  describeOnBackends as describeOnTestBackends,
} from '@sessionkit/test-backends';
import type { UIMessage } from 'ai';
import {
  type ChatStore,
  type ChatStoreOptions,
  createChatStore,
  type UIMessageLike,
} from '../../src/index.js';

export type AnyStore = FullStore<unknown>;

export interface BackendContext extends Omit<BackendSuite, 'requiresCommitOptions'> {
  /** A chat store on `store()`, or on `store` when given. */
  chats<M extends UIMessageLike = UIMessage>(
    options?: ChatStoreOptions,
    store?: AnyStore,
  ): ChatStore<M>;
  /** Skips the tests of the calling `describe` block where chats cannot be written. */
  requiresChatWrites(): void;
}

/** `describe(\`${backend} › ${title}\`, …)` for every backend. */
export function describeOnBackends(title: string, body: (ctx: BackendContext) => void): void {
  describeOnTestBackends(
    {
      package: 'ai-sdk',
      commitOptions: { operationId: 'probe', truncate: 0 },
      needing: 'that write chats',
    },
    title,
    ({ requiresCommitOptions, ...suite }) =>
      body({
        ...suite,
        chats: (options, store) => createChatStore(store ?? suite.store(), options),
        requiresChatWrites: requiresCommitOptions,
      }),
  );
}
