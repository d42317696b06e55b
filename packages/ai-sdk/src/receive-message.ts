// receiveMessage: the server side of a chat request that sends only the last message (the
// AI SDK's "sending only the last message" setup): the message is taken into the chat and
// the messages to stream a reply from come back.
import type { LoadChatOptions } from './chat-store.js';
import { idOf, type UIMessageLike } from './messages.js';
import { saveUserMessage } from './user-message.js';
import type { ChatBackingStore } from './writes.js';

/**
 * Takes `message` into the chat and returns the chat's messages (all, or the last
 * `options.last`) with it: a user message is saved first (`saveUserMessage`); an assistant
 * message (the reply the client received, with tool outputs or approvals added, sent back
 * to be continued) takes the place of the returned message with its id when that is the
 * last one, and is added after them otherwise. An assistant message is not written: the
 * continuation's `onEnd` saves the reply that extends it.
 */
export async function receiveMessage(
  store: ChatBackingStore,
  chatId: string,
  message: UIMessageLike,
  options: LoadChatOptions,
): Promise<unknown[]> {
  if (message.role === 'user') await saveUserMessage(store, chatId, message);
  const { last, signal } = options;
  const messages = await store.loadMessages(chatId, last === undefined ? undefined : { last }, {
    signal,
  });
  if (message.role === 'user') return messages;
  const continued = idOf(messages.at(-1)) === message.id;
  return [...(continued ? messages.slice(0, -1) : messages), message];
}
