// The callback the SDK calls when a reply stream ends (`onFinish` in 6.x, `onEnd` in 7.x):
// the reply is appended, a continuation replaces the message it continued, and a reply cut
// short is kept with a mark saying why.
import { randomUUID } from 'node:crypto';
import { errors } from './errors.js';
import {
  assertUIMessage,
  hasContent,
  idOf,
  type PartialReason,
  type UIMessageLike,
  withPartialMark,
} from './messages.js';
import { type ChatBackingStore, commitOnce, commitOverWindow, newOperationId } from './writes.js';

/**
 * What the chat store reads of the event the SDK passes to `onFinish` (6.x,
 * `toUIMessageStreamResponse`, `toUIMessageStream`, `createUIMessageStream`) and `onEnd`
 * (7.x): the SDK's events have these fields and more.
 */
export interface ChatEndEvent<M extends UIMessageLike> {
  /** The reply as the client received it (with the continued message's parts, if any). */
  responseMessage: M;
  /** True when the reply extends the last of the original messages (same id). */
  isContinuation: boolean;
  /** True when the stream was aborted. */
  isAborted: boolean;
  /** 7.x: true when the consumer cancelled the stream (a client disconnect). */
  isCancelled?: boolean | undefined;
  /** The stream's outcome: `completed`, `failed`, `aborted` or `unknown`. */
  outcome?: { status: string } | undefined;
  /** The model's finish reason; absent when the stream ended before its `finish` chunk. */
  finishReason?: string | undefined;
}

/** The callback `onFinish(chatId)` / `onEnd(chatId)` return, for the SDK to call once. */
export type ChatEndHandler<M extends UIMessageLike> = (event: ChatEndEvent<M>) => Promise<void>;

/** Options of `onFinish(chatId, options)` and `onEnd(chatId, options)`. */
export interface ReplyOptions {
  /**
   * After the reply is saved, clear the chat's active stream (`setActiveStream(chatId,
   * null)`, one more store call), as the SDK's resumable-stream setup does when a stream
   * ends. Default false.
   */
  clearActiveStream?: boolean | undefined;
}

/** Saves the reply of `event` to the chat (see `ChatStore.onEnd`). */
export async function saveReply<M extends UIMessageLike>(
  store: ChatBackingStore,
  chatId: string,
  event: ChatEndEvent<M>,
): Promise<void> {
  if (typeof event !== 'object' || event === null) {
    throw errors.invalid('onEnd: the event must be the object the AI SDK passes');
  }
  assertUIMessage(event.responseMessage, 'onEnd: event.responseMessage');
  const reply = withPartialMark(withId(event.responseMessage), partialReason(event));
  if (event.isContinuation) await replaceContinued(store, chatId, reply);
  else if (hasContent(reply)) {
    await commitOnce(store, chatId, { operationId: newOperationId('reply'), append: [reply] });
  }
}

/**
 * Why the reply of `event` is partial, or `undefined` when it completed. A stream that ended
 * with no outcome and no finish reason was cut off (in 6.x a client disconnect looks so).
 */
export function partialReason(event: ChatEndEvent<UIMessageLike>): PartialReason | undefined {
  const status = event.outcome?.status;
  if (event.isAborted || status === 'aborted') return 'aborted';
  if (status === 'failed') return 'failed';
  if (status === 'completed') return undefined;
  if (event.isCancelled === true || event.finishReason === undefined) return 'interrupted';
  return undefined;
}

/**
 * The continued reply replaces the chat's last message when that is the message it
 * continues (same id): `truncate` drops it and `append` adds the reply, in one commit under
 * the revision of a window read of the last message. When the last message is another one
 * (the continued message was never saved), the reply is appended.
 */
async function replaceContinued(
  store: ChatBackingStore,
  chatId: string,
  reply: UIMessageLike,
): Promise<void> {
  const write = { operation: 'onEnd', kind: 'continuation', last: 1 };
  await commitOverWindow(store, chatId, write, async (last) => {
    const continuesLast = idOf(last.messages[0]) === reply.id;
    return { ...(continuesLast ? { truncate: last.messageCount - 1 } : {}), append: [reply] };
  });
}

/**
 * The reply with an id: the SDK leaves it empty when the stream was given neither
 * `originalMessages` nor `generateMessageId`, and a stored message needs one to be continued.
 */
function withId<M extends UIMessageLike>(message: M): M {
  return message.id === '' ? { ...message, id: randomUUID() } : message;
}
