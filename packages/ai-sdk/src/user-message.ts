// saveUserMessage: the message a user sent, appended once. A double submit (the same message
// posted twice, at once or after the first landed) is a `conflict`, never a second copy.
import { autoTitle, type MessageWindow } from '@sessionkit/core';
import { errors } from './errors.js';
import { idOf, isUserMessage, type UIMessageLike } from './messages.js';
import { type ChatBackingStore, commitOverWindow } from './writes.js';

// A user message's reply follows it, so a message sent again after its first copy landed
// (and after its reply) is among the chat's last two messages.
const RECENT_MESSAGES = 2;

/**
 * Appends `message` to the chat in one commit under the revision of a window read of the
 * chat's last two messages. The message is refused with `conflict` when a message with its
 * id is among them (a double submit); a commit that loses to another writer reads again, so
 * of two copies sent at once one lands and the other finds it and fails `conflict`. The
 * chat's first user message titles an untitled chat (core's `autoTitle`), which costs one
 * `load` of the chat while it holds at most two messages.
 */
export async function saveUserMessage(
  store: ChatBackingStore,
  chatId: string,
  message: UIMessageLike,
): Promise<void> {
  const write = { operation: 'saveUserMessage', kind: 'user', last: RECENT_MESSAGES };
  await commitOverWindow(store, chatId, write, async (recent) => {
    if (recent.messages.some((stored) => idOf(stored) === message.id)) {
      throw errors.make(
        'conflict',
        `chat "${chatId}" already has message "${message.id}" — a double submit; load the chat instead of sending it again`,
        { sessionId: chatId },
      );
    }
    const title = await firstUserTitle(store, chatId, recent, message);
    return { append: [message], ...(title === undefined ? {} : { patch: { title } }) };
  });
}

/**
 * The title `message` gives the chat when it is the chat's first user message and the chat
 * has no title yet, else `undefined`. Reads the chat only when `recent` is the whole
 * history (at most two messages) and holds no user message.
 */
async function firstUserTitle(
  store: ChatBackingStore,
  chatId: string,
  recent: MessageWindow<unknown>,
  message: UIMessageLike,
): Promise<string | undefined> {
  if (recent.offset > 0 || recent.messages.some(isUserMessage)) return undefined;
  const chat = await store.load(chatId);
  const titled = autoTitle({ title: chat.title, messages: [...chat.messages, message] });
  return titled.title === chat.title ? undefined : titled.title;
}
