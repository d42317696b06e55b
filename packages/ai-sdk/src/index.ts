/**
 * `@sessionkit/ai-sdk`: chat persistence for the Vercel AI SDK (`ai` 6.x and 7.x) on any
 * sessionkit store.
 *
 * ```ts
 * const chats = await openChatStore('file:./chats');
 * const chatId = await chats.createChat({ userId: 'alice' });
 * await chats.saveUserMessage(chatId, message);
 * // 7.x: toUIMessageStream({ stream, originalMessages, onEnd: chats.onEnd(chatId) })
 * ```
 */
export type { ChatStore, CreateChatOptions, LoadChatOptions } from './chat-store.js';
export type { ChatCursor, ChatSummary, ListChatsOptions } from './listing.js';
export {
  type PartialReason,
  type PartialReply,
  partialReply,
  type UIMessageLike,
} from './messages.js';
export type { ChatStoreOptions, OpenChatStoreOptions } from './options.js';
export type { ChatEndEvent, ChatEndHandler, ReplyOptions } from './replies.js';
export { createChatStore, openChatStore } from './sessionkit-chat-store.js';
export type { ChatBackingStore } from './writes.js';
