// ChatStore: the AI SDK's chat persistence (create, load, save, the end-of-stream callback,
// the active stream, a user's chats) as the application sees it.
import type { UIMessage } from 'ai';
import type { ChatSummary, ListChatsOptions } from './listing.js';
import type { UIMessageLike } from './messages.js';
import type { ChatEndHandler, ReplyOptions } from './replies.js';
import type { ChatBackingStore } from './writes.js';

/** Options of `createChat`. */
export interface CreateChatOptions {
  /** The user the chat belongs to, whose `listChats` lists it. Default `""` (none). */
  userId?: string | undefined;
  /** The chat's title. Default: none, and the first user message titles the chat. */
  title?: string | undefined;
  /**
   * The chat id (1–128 characters of `[A-Za-z0-9._-]`, not starting with `.`), e.g. one
   * the client made. Default: a new time-sortable id.
   */
  chatId?: string | undefined;
}

/** Options of `loadChat`. */
export interface LoadChatOptions {
  /** Only the last `last` messages (a window read; its cost grows with `last`). Default: all. */
  last?: number | undefined;
  /** Aborts the read (`aborted`). */
  signal?: AbortSignal | undefined;
}

/**
 * AI SDK chats kept in a sessionkit store. Each chat is a sessionkit session (its id is the
 * chat id, its folder `folderPrefix + userId`), and each `UIMessage` one sessionkit message
 * stored as the SDK made it, so the `sessionkit` CLI and every sessionkit tool list, search,
 * branch, export and prune chats. Every method is a few store calls (one to four) whose cost
 * grows with what it reads or writes, not with the chat's history (except `loadChat` and
 * `receiveMessage` without `last`). Errors are `SessionKitError`s: the store's, or the binding's own, prefixed
 * `[sessionkit/ai-sdk]`; a missing chat is `not_found`. `M` is the application's
 * `UIMessage` type.
 */
export interface ChatStore<M extends UIMessageLike = UIMessage> {
  /** The store the chats live in. */
  readonly store: ChatBackingStore;

  /**
   * Creates an empty chat and returns its id: one `create`. Throws `exists` (a `chatId`
   * that is taken), `invalid_argument` (a bad id, a title or user id over the store's
   * limits).
   */
  createChat(options?: CreateChatOptions): Promise<string>;

  /**
   * The chat's messages, oldest first, as they were saved: all of them (one `loadMessages`)
   * or the last `options.last` (one window read). Replies that did not complete carry a
   * `partial` mark (see `partialReply`). Throws `not_found`, `invalid_argument` (a bad
   * `last`), `aborted`.
   */
  loadChat(chatId: string, options?: LoadChatOptions): Promise<M[]>;

  /**
   * Appends the message the user sent, in one commit: a window read of the chat's last two
   * messages, then a commit under the revision it read. A double submit is refused with
   * `conflict`, nothing written: when a message with this id is among the last two (sent
   * again after it landed, before or after its reply), or when two copies are sent at once
   * (one lands; the other reads again and finds it). A commit that loses to another writer
   * (a reply being saved) reads again. The first user message of an untitled chat titles it
   * (core's `autoTitle`: its text parts, 72 characters), for one more `load` while the chat
   * holds at most two messages. Throws `not_found`, `conflict`, `invalid_argument` (not a
   * user `UIMessage` with an id, or not JSON).
   */
  saveUserMessage(chatId: string, message: M): Promise<void>;

  /**
   * The server's half of a request that sends only the last message (`useChat` with
   * `prepareSendMessagesRequest` returning `{ id, message }`): takes `message` into the
   * chat and returns the messages to stream a reply from (`originalMessages`), all of them
   * or the last `options.last` (a window read).
   * - A user message is saved first (`saveUserMessage`, with its costs; a double submit is
   *   `conflict`, nothing written), then the chat is read.
   * - An assistant message (the reply the client received, sent back with tool outputs or
   *   approvals added, to be continued) is not written: it takes the place of the chat's
   *   last message of the same id in what is returned (or follows the messages when the
   *   last one is another), and the continuation's `onEnd` saves the reply that extends
   *   it. The client's copy is trusted as the SDK's own setup trusts it: validate it
   *   (`validateUIMessages`) before streaming.
   *
   * Throws `not_found`, `conflict`, `invalid_argument` (not a user or assistant
   * `UIMessage` with an id), `aborted` (the read).
   */
  receiveMessage(chatId: string, message: M, options?: LoadChatOptions): Promise<M[]>;

  /**
   * The callback for `toUIMessageStreamResponse`'s or `toUIMessageStream`'s `onFinish`
   * (6.x): the same function as `onEnd(chatId, options)`, which says what it does.
   */
  onFinish(chatId: string, options?: ReplyOptions): ChatEndHandler<M>;

  /**
   * The callback for `toUIMessageStream`'s `onEnd` (7.x), which the SDK calls once when the
   * reply stream ends. It saves the reply (`responseMessage`):
   * - a new reply is appended: one commit, no read. A reply with no content (aborted before
   *   its first part) is not saved.
   * - a continuation (`isContinuation`: the reply extends the last original message, e.g.
   *   after a client-side tool result) replaces that message: a window read of the chat's
   *   last message, then one commit that `truncate`s it and appends the reply, never a
   *   rewrite of the history. When the chat's last message is not the continued one (it was
   *   never saved), the reply is appended.
   * - a reply that did not complete is kept as far as it got, marked `partial: { reason }`
   *   (`aborted`, `failed`, or `interrupted`: cut off, as by a client disconnect); a
   *   continuation that completes it drops the mark.
   *
   * A reply with an empty id gets a random one. Commits carry an operation id and are sent
   * again after `unavailable` (up to 3 times), so a lost reply never saves twice. With
   * `clearActiveStream`, one more call clears the active stream. Errors reach the SDK (the
   * stream then ends with an error). Throws `invalid_argument` for a bad chat id at once,
   * without I/O.
   */
  onEnd(chatId: string, options?: ReplyOptions): ChatEndHandler<M>;

  /**
   * Records which stream the chat is receiving (`null`: none), for resuming it after a
   * reload: one `saveRuntimeStatus`, kept apart from the messages (a commit never changes
   * it). The last call wins. Throws `not_found`, `invalid_argument` (not a non-empty
   * string or `null`).
   */
  setActiveStream(chatId: string, streamId: string | null): Promise<void>;

  /**
   * The chat's active stream id, or `null` when none is recorded: one `loadRuntimeStatus`.
   * Throws `not_found`.
   */
  activeStream(chatId: string): Promise<string | null>;

  /**
   * A user's chats, most recently written first (then by id), for a sidebar: one `list`
   * of summaries, which never reads messages. `query` searches titles and the text parts
   * of messages; `startAfter` (the last chat of the previous page) pages by keyset, stable
   * while chats are written; archived chats are left out. Throws `invalid_argument` (no
   * `userId`, a bad cursor or limit), `aborted`.
   */
  listChats(options: ListChatsOptions): Promise<ChatSummary[]>;

  /** Deletes the chat with its messages and runtime status: one `delete`. Throws `not_found`. */
  deleteChat(chatId: string): Promise<void>;

  /** Closes the store when `openChatStore` opened it; a borrowed store stays open. Idempotent. */
  close(): Promise<void>;
}
