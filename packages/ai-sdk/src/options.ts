// What a chat store is made from, checked once when it is created.
import {
  isCommitter,
  isHistoryReader,
  isRuntimeStatusStore,
  isStore,
  MAX_SHORT_TEXT_LENGTH,
} from '@sessionkit/core';
import { errors } from './errors.js';
import type { ChatBackingStore } from './writes.js';

/** Options of `createChatStore(store, options)` and `openChatStore(url, options)`. */
export interface ChatStoreOptions {
  /**
   * Prepended to a user id to make the folder of that user's chats (sessionkit's `folder`,
   * what `listChats` filters on): `"chat/"` keeps chats apart from other sessions of a
   * shared store (`sessionkit list --folder chat/alice`). At most 1024 characters in all.
   * Default `""`: the folder is the user id.
   */
  folderPrefix?: string | undefined;
}

/** Options of `openChatStore(url, options)`. */
export interface OpenChatStoreOptions extends ChatStoreOptions {
  /** Passed to `openStore(url, storeOptions)` (adapter options). Default: none. */
  storeOptions?: Record<string, unknown> | undefined;
}

/** The checked options. */
export interface CheckedChatStoreOptions {
  folderPrefix: string;
}

/** Throws `invalid_argument` unless `store` has what a chat store needs. */
export function assertChatBackingStore(store: unknown): asserts store is ChatBackingStore {
  if (!isStore(store) || !isCommitter(store) || !isHistoryReader(store)) {
    throw errors.invalid(
      'createChatStore: store must be a sessionkit store with commit and loadMessages',
    );
  }
  if (!isRuntimeStatusStore(store)) {
    throw errors.invalid(
      'createChatStore: store must keep runtime status (saveRuntimeStatus, loadRuntimeStatus)',
    );
  }
}

/** Checks `options`. Throws `invalid_argument`. */
export function checkOptions(options: ChatStoreOptions | undefined): CheckedChatStoreOptions {
  if (options === undefined) return { folderPrefix: '' };
  if (typeof options !== 'object' || options === null) {
    throw errors.invalid('createChatStore: options must be an object');
  }
  const folderPrefix = options.folderPrefix ?? '';
  if (typeof folderPrefix !== 'string' || folderPrefix.length > MAX_SHORT_TEXT_LENGTH) {
    throw errors.invalid(
      `createChatStore: options.folderPrefix must be a string of at most ${MAX_SHORT_TEXT_LENGTH} characters`,
    );
  }
  return { folderPrefix };
}
