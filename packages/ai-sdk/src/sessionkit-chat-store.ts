// The ChatStore on sessionkit sessions of any store: each method checks its arguments and
// hands the store calls to the file that holds them. One chat is one sessionkit session and
// one UIMessage one sessionkit message, stored as it is.
import { isValidId, newSessionId, openStore } from '@sessionkit/core';
import type { UIMessage } from 'ai';
import type { ChatStore, CreateChatOptions, LoadChatOptions } from './chat-store.js';
import { errors } from './errors.js';
import {
  type ChatSummary,
  chatSummaryOf,
  type ListChatsOptions,
  listOptionsOf,
} from './listing.js';
import { assertUIMessage, type UIMessageLike } from './messages.js';
import {
  assertChatBackingStore,
  type ChatStoreOptions,
  checkOptions,
  type OpenChatStoreOptions,
} from './options.js';
import { receiveMessage } from './receive-message.js';
import { type ChatEndHandler, type ReplyOptions, saveReply } from './replies.js';
import { saveUserMessage } from './user-message.js';
import type { ChatBackingStore } from './writes.js';

/** What `setActiveStream` keeps as the chat's runtime status. */
type ActiveStreamStatus = { activeStreamId: string | null };

class SessionKitChatStore<M extends UIMessageLike> implements ChatStore<M> {
  readonly store: ChatBackingStore;
  readonly #folderPrefix: string;
  readonly #ownsStore: boolean;

  constructor(store: unknown, options: ChatStoreOptions | undefined, ownsStore: boolean) {
    assertChatBackingStore(store);
    this.store = store;
    this.#folderPrefix = checkOptions(options).folderPrefix;
    this.#ownsStore = ownsStore;
  }

  async createChat(options: CreateChatOptions = {}): Promise<string> {
    const { userId = '', title, chatId = newSessionId() } = options;
    if (typeof userId !== 'string') throw errors.invalid('createChat: userId must be a string');
    const session = await this.store.create({
      id: chatId,
      folder: this.#folderPrefix + userId,
      ...(title === undefined ? {} : { title }),
    });
    return session.id;
  }

  async loadChat(chatId: string, options: LoadChatOptions = {}): Promise<M[]> {
    const { last, signal } = options;
    const window = last === undefined ? undefined : { last };
    return (await this.store.loadMessages(chatId, window, { signal })) as M[];
  }

  async saveUserMessage(chatId: string, message: M): Promise<void> {
    assertUIMessage(message, 'saveUserMessage: message', 'user');
    // The id is what tells a double submit from a new message.
    if (message.id === '') throw errors.invalid('saveUserMessage: message must have an id');
    await saveUserMessage(this.store, chatId, message);
  }

  async receiveMessage(chatId: string, message: M, options: LoadChatOptions = {}): Promise<M[]> {
    assertUIMessage(message, 'receiveMessage: message');
    if (message.role === 'system') {
      throw errors.invalid('receiveMessage: message must have the role "user" or "assistant"');
    }
    if (message.id === '') throw errors.invalid('receiveMessage: message must have an id');
    return (await receiveMessage(this.store, chatId, message, options)) as M[];
  }

  onFinish(chatId: string, options: ReplyOptions = {}): ChatEndHandler<M> {
    return this.onEnd(chatId, options);
  }

  onEnd(chatId: string, options: ReplyOptions = {}): ChatEndHandler<M> {
    if (!isValidId(chatId)) {
      throw errors.invalid(`onEnd: ${JSON.stringify(String(chatId))} is not a valid chat id`);
    }
    const clearActiveStream = options.clearActiveStream === true;
    return async (event) => {
      await saveReply(this.store, chatId, event);
      if (clearActiveStream) await this.setActiveStream(chatId, null);
    };
  }

  async setActiveStream(chatId: string, streamId: string | null): Promise<void> {
    if (streamId !== null && (typeof streamId !== 'string' || streamId === '')) {
      throw errors.invalid('setActiveStream: streamId must be a non-empty string or null');
    }
    const status: ActiveStreamStatus = { activeStreamId: streamId };
    await this.store.saveRuntimeStatus(chatId, status);
  }

  async activeStream(chatId: string): Promise<string | null> {
    const status = await this.store.loadRuntimeStatus(chatId);
    const id = (status as Partial<ActiveStreamStatus> | null)?.activeStreamId;
    return typeof id === 'string' ? id : null;
  }

  async listChats(options: ListChatsOptions): Promise<ChatSummary[]> {
    const list = listOptionsOf(options, this.#folderPrefix);
    const summaries = await this.store.list(list, { signal: options.signal });
    return summaries.map((summary) => chatSummaryOf(summary, this.#folderPrefix));
  }

  async deleteChat(chatId: string): Promise<void> {
    await this.store.delete(chatId);
  }

  async close(): Promise<void> {
    if (this.#ownsStore) await this.store.close();
  }
}

/**
 * A chat store over `store` (borrowed: `close()` leaves it open): any sessionkit store with
 * `commit` (taking `truncate` and `operationId`), `loadMessages` and runtime status — every
 * first-party adapter. `M` is the application's `UIMessage` type (default: the `ai`
 * package's `UIMessage`). No I/O. Throws `invalid_argument` (a store without those
 * capabilities, bad options).
 */
export function createChatStore<M extends UIMessageLike = UIMessage>(
  store: ChatBackingStore,
  options?: ChatStoreOptions,
): ChatStore<M> {
  return new SessionKitChatStore<M>(store, options, false);
}

/**
 * A chat store on a store opened from a URL (`file:./chats`, `postgres://…`, `redis://…`,
 * `s3://…`, `memory:`) with core's `openStore`; it owns that store and `close()` closes it.
 * Throws what `openStore` throws (`invalid_argument` for a bad URL or a missing adapter
 * package) and what `createChatStore` throws.
 */
export async function openChatStore<M extends UIMessageLike = UIMessage>(
  url: string,
  options: OpenChatStoreOptions = {},
): Promise<ChatStore<M>> {
  const { storeOptions, ...chatOptions } = options;
  const store = await openStore<unknown>(url, storeOptions);
  try {
    return new SessionKitChatStore<M>(store, chatOptions, true);
  } catch (e) {
    await store.close();
    throw e;
  }
}
