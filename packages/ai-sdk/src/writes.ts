// How the chat store writes. Every write is one commit carrying an operation id of its own,
// sent again with that id when it fails `unavailable`: a commit that landed but whose reply
// was lost then resolves with its first result instead of landing twice. Writes that depend
// on what they read (a continuation, a user message) commit under the revision they read
// and read again when another writer got in first.
import { randomUUID } from 'node:crypto';
import {
  type CommitInput,
  type CommitResult,
  type Committer,
  type HistoryReader,
  isSessionKitError,
  loadMessageWindow,
  type MessageWindow,
  type RuntimeStatusStore,
  type Store,
} from '@sessionkit/core';
import { LOST_RACE, retryLostRaces } from '@sessionkit/core/adapter';
import { errors } from './errors.js';

/**
 * A store with what the chat store needs: atomic commits (with `truncate` and
 * `operationId`), window reads and runtime status. Every first-party adapter has them.
 */
export type ChatBackingStore = Store<unknown> &
  Committer<unknown> &
  HistoryReader<unknown> &
  RuntimeStatusStore;

// Pauses before the retries of a commit that failed `unavailable` (about 2 s in all): long
// enough for a failover or a reconnect, short enough for a request that waits on it.
const UNAVAILABLE_PAUSES_MS = [100, 400, 1600];

/** A new operation id for one logical write of the chat store (`kind` names it). */
export function newOperationId(kind: string): string {
  return `ai-sdk:${kind}:${randomUUID()}`;
}

/**
 * `store.commit(chatId, input)`, sent again with the same `operationId` after each of up to
 * three `unavailable` failures (then that error is thrown). Other errors are thrown at once.
 */
export async function commitOnce(
  store: ChatBackingStore,
  chatId: string,
  input: CommitInput<unknown> & { operationId: string },
): Promise<CommitResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await store.commit(chatId, input);
    } catch (e) {
      const pause = UNAVAILABLE_PAUSES_MS[attempt];
      if (pause === undefined || !isSessionKitError(e, 'unavailable')) throw e;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** What `commitOverWindow` reads and how its write is named. */
export interface WindowedWrite {
  /** The method, for errors (`"saveUserMessage"`). */
  operation: string;
  /** The operation id's kind (`"user"`). */
  kind: string;
  /** How many of the chat's last messages the write looks at. */
  last: number;
}

/**
 * A write that depends on the chat's last messages: reads a window of the last
 * `write.last`, asks `plan` for the commit (`plan` may throw to refuse), and commits it under
 * the revision it read, with one operation id for every attempt. When another write came
 * first it reads again, after a growing random pause, for up to 20 s; then it fails
 * `unavailable`. Errors `plan` throws end it as they are.
 */
export function commitOverWindow(
  store: ChatBackingStore,
  chatId: string,
  write: WindowedWrite,
  plan: (window: MessageWindow<unknown>) => Promise<CommitInput<unknown>>,
): Promise<void> {
  const operationId = newOperationId(write.kind);
  return retryLostRaces({ errors, operation: write.operation, sessionId: chatId }, async () => {
    const window = await loadMessageWindow(store, chatId, { last: write.last });
    const input = await plan(window);
    try {
      await commitOnce(store, chatId, { ...input, operationId, expectedRevision: window.revision });
      return undefined;
    } catch (e) {
      if (isSessionKitError(e, 'conflict')) return LOST_RACE;
      throw e;
    }
  });
}
