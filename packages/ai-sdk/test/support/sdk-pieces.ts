// The parts of a test's SDK side that both major versions write alike, from the version's
// own module: the tools, `validateUIMessages`, `convertToModelMessages` and the `Chat`
// client. What differs (the mock model and the stream wiring, with each version's callback
// type) stays in sdk-v6.ts and sdk-v7.ts.
import { z } from 'zod';
import type { ModelScript } from './model-script.js';
import type { ReplyInput, SdkVersion, TestChat, TestMessage } from './sdk.js';

/** What the server-side tool `weather` answers. */
function forecastOf(city: string): { city: string; forecast: string } {
  return { city, forecast: city === 'Oslo' ? 'snow' : 'sunny' };
}

/** The tools' input schemas (both versions take zod 4 schemas). */
const WEATHER_INPUT = z.object({ city: z.string() });
const CONFIRM_INPUT = z.object({ question: z.string() });
const CONFIRM_OUTPUT = z.string();

/** What the client answers the client-side tool `confirm` with. */
const CONFIRMATION = 'yes';

/**
 * The state `Chat` keeps its messages in (`ChatState`), in an array, as the framework
 * bindings keep it in their reactive state.
 */
class ArrayChatState<M> {
  status: 'submitted' | 'streaming' | 'ready' | 'error' = 'ready';
  error: Error | undefined = undefined;
  messages: M[];
  constructor(messages: M[] = []) {
    this.messages = messages;
  }
  pushMessage = (message: M): void => {
    this.messages = [...this.messages, message];
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: M): void => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The body `Chat` sends: the chat id and the last message only. */
function lastMessageOnly({ id, messages }: { id: string; messages: unknown[] }): {
  body: { id: string; message: unknown };
} {
  return { body: { id, message: messages.at(-1) } };
}

/** What both versions export under these names, as the tests call them. */
export interface SdkModule {
  tool(definition: object): unknown;
  AbstractChat: abstract new (init: object) => object;
  DefaultChatTransport: new (init: object) => unknown;
  lastAssistantMessageIsCompleteWithToolCalls: unknown;
  validateUIMessages(options: { messages: unknown; tools: unknown }): Promise<unknown[]>;
  convertToModelMessages(messages: unknown[], options: object): Promise<unknown[]>;
  streamText(options: object): unknown;
  stepCountIs(count: number): unknown;
}

/** The version's mock language model class (`MockLanguageModelV3` / `V4`). */
export type MockModelClass = new (options: { doStream: ModelScript['doStream'] }) => unknown;

/** The pieces of `SdkVersion` that are the same in both versions, built from `ai`'s module. */
export interface SdkPieces extends Pick<SdkVersion, 'model' | 'validate' | 'chat'> {
  /**
   * `streamText` over `messages` with the tests' tools, up to 5 steps (tool calls the
   * server runs, then the answer); tool calls an abort cut off are left out of the prompt.
   */
  streamText(input: Pick<ReplyInput, 'model' | 'messages' | 'abortSignal'>): Promise<unknown>;
}

export function sdkPieces(ai: SdkModule, MockModel: MockModelClass): SdkPieces {
  const tools = {
    weather: ai.tool({
      description: 'The weather in a city.',
      inputSchema: WEATHER_INPUT,
      execute: async ({ city }: { city: string }) => forecastOf(city),
    }),
    // No execute: the client answers it (a client-side tool).
    confirm: ai.tool({
      description: 'Asks the user to confirm.',
      inputSchema: CONFIRM_INPUT,
      outputSchema: CONFIRM_OUTPUT,
    }),
  };
  class Chat extends ai.AbstractChat {
    constructor(init: { messages?: unknown[] | undefined; [key: string]: unknown }) {
      super({ ...init, state: new ArrayChatState(init.messages) });
    }
  }
  return {
    model: (script) => new MockModel({ doStream: script.doStream }),
    validate: async (messages) =>
      (await ai.validateUIMessages({ messages, tools })) as TestMessage[],
    streamText: async ({ model, messages, abortSignal }) =>
      ai.streamText({
        model,
        messages: await ai.convertToModelMessages(messages, {
          tools,
          ignoreIncompleteToolCalls: true,
        }),
        tools,
        abortSignal,
        stopWhen: ai.stepCountIs(5),
      }),
    chat({ id, api, messages }) {
      const chat = new Chat({
        id,
        messages,
        transport: new ai.DefaultChatTransport({
          api,
          prepareSendMessagesRequest: lastMessageOnly,
        }),
        sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithToolCalls,
        onToolCall: ({ toolCall }: { toolCall: { toolName: string; toolCallId: string } }) => {
          if (toolCall.toolName !== 'confirm') return;
          const { addToolOutput } = chat as unknown as { addToolOutput(o: object): Promise<void> };
          void addToolOutput({
            tool: 'confirm',
            toolCallId: toolCall.toolCallId,
            output: CONFIRMATION,
          });
        },
      });
      return chat as unknown as TestChat;
    },
  };
}
