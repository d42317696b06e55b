// The AI SDK 7.x side of the tests: `toUIMessageStream({ stream: result.stream, onEnd })`
// inside `createUIMessageStreamResponse`.

import type { StreamTextResult, ToolSet, UIMessage, UIMessageStreamOnEndCallback } from 'ai-v7';
import * as ai from 'ai-v7';
import { MockLanguageModelV4 } from 'ai-v7/test';
import type { ChatStore } from '../../src/index.js';
import type { SdkVersion } from './sdk.js';
import { type MockModelClass, type SdkModule, sdkPieces } from './sdk-pieces.js';

const pieces = sdkPieces(
  ai as unknown as SdkModule,
  MockLanguageModelV4 as unknown as MockModelClass,
);

export const sdk7: SdkVersion = {
  name: 'ai 7',
  model: pieces.model,
  validate: pieces.validate,
  chat: pieces.chat,
  async streamReply({ chats, chatId, saving, ...input }) {
    // The chat store's callback, typed as 7.x's own: it type-checks without a cast.
    const onEnd: UIMessageStreamOnEndCallback<UIMessage> = (
      chats as unknown as ChatStore<UIMessage>
    ).onEnd(chatId);
    const result = (await pieces.streamText(input)) as StreamTextResult<ToolSet, never, never>;
    return ai.createUIMessageStreamResponse({
      stream: ai.toUIMessageStream({
        stream: result.stream,
        originalMessages: input.messages as unknown as UIMessage[],
        generateMessageId: ai.generateId,
        onEnd: (event) => saving(Promise.resolve(onEnd(event))),
      }),
    });
  },
};
