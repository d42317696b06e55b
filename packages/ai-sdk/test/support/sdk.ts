// What a test does with one major version of the AI SDK, written once per version
// (sdk-v6.ts, sdk-v7.ts) with that version's own pieces: its mock model, `streamText` and
// UI message stream wiring, `validateUIMessages`, and its `Chat` client over HTTP.
import type { ChatStore, UIMessageLike } from '../../src/index.js';
import type { ModelScript } from './model-script.js';

/** A `UIMessage` of either version, as the tests read it. */
export interface TestMessage extends UIMessageLike {
  parts: { type: string; text?: string; [key: string]: unknown }[];
}

/** The SDK's `Chat` client (what `useChat` wraps), headless. */
export interface TestChat {
  readonly messages: TestMessage[];
  readonly status: string;
  /** Sends a user message with this text; resolves when its reply (and any continuation) ended. */
  sendMessage(message: { text: string }): Promise<void>;
  /** Stops reading the reply: the request is aborted, as `useChat`'s `stop()` does. */
  stop(): Promise<void>;
}

/** Input of `SdkVersion.streamReply`. */
export interface ReplyInput {
  model: unknown;
  /** Validated messages to reply to (`originalMessages`). */
  messages: TestMessage[];
  abortSignal: AbortSignal;
  /** The chat store whose `onFinish`/`onEnd` saves the reply of chat `chatId`. */
  chats: ChatStore<TestMessage>;
  chatId: string;
  /** Told of the reply's save when the SDK calls the callback; returns it for the SDK to await. */
  saving(save: Promise<void>): Promise<void>;
}

/** One major version of the AI SDK. */
export interface SdkVersion {
  readonly name: 'ai 6' | 'ai 7';
  /** The version's mock language model (`MockLanguageModelV3` / `V4`) over `script`. */
  model(script: ModelScript): unknown;
  /** `validateUIMessages` against the tests' tools. */
  validate(messages: unknown): Promise<TestMessage[]>;
  /**
   * A reply to `messages` from `streamText` with the tests' tools, as the HTTP response the
   * version's wiring makes (6.x `toUIMessageStreamResponse({ onFinish })`, 7.x
   * `toUIMessageStream({ onEnd })` in `createUIMessageStreamResponse`), saved by the chat
   * store's callback, typed as the version's own callback type.
   */
  streamReply(input: ReplyInput): Promise<Response>;
  /**
   * The version's `Chat` with `DefaultChatTransport` on `api`, sending only the last
   * message (`{ id, message }`), answering the client-side tool `confirm` with "yes" and
   * sending automatically when every tool call of the last reply has its output.
   */
  chat(init: { id: string; api: string; messages?: TestMessage[] | undefined }): TestChat;
}
