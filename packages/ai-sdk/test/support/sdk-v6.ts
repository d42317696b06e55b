// The AI SDK 6.x side of the tests: `streamText(…).toUIMessageStreamResponse({ onFinish })`.

import type { StreamTextResult, ToolSet, UIMessage, UIMessageStreamOnFinishCallback } from 'ai';
import * as ai from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type { ChatStore } from '../../src/index.js';
import type { SdkVersion } from './sdk.js';
import { type MockModelClass, type SdkModule, sdkPieces } from './sdk-pieces.js';

const pieces = sdkPieces(
  ai as unknown as SdkModule,
  MockLanguageModelV3 as unknown as MockModelClass,
);

export const sdk6: SdkVersion = {
  name: 'ai 6',
  model: pieces.model,
  validate: pieces.validate,
  chat: pieces.chat,
  async streamReply({ chats, chatId, saving, ...input }) {
    // The chat store's callback, typed as 6.x's own: it type-checks without a cast.
    const onFinish: UIMessageStreamOnFinishCallback<UIMessage> = (
      chats as unknown as ChatStore<UIMessage>
    ).onFinish(chatId);
    const result = (await pieces.streamText(input)) as StreamTextResult<ToolSet, never>;
    return result.toUIMessageStreamResponse({
      originalMessages: input.messages as unknown as UIMessage[],
      generateMessageId: ai.generateId,
      onFinish: (event) => saving(Promise.resolve(onFinish(event))),
    });
  },
};
