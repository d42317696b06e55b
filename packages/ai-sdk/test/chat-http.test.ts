// Chats as an application runs them: the SDK's own `Chat` client over HTTP (Node's `http`
// and `fetch`), a server streaming `streamText` over the SDK's mock models with 6.x and 7.x
// wiring, and the chat store saving every turn, on every backend.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type ChatStore, partialReply } from '../src/index.js';
import { type ChatServer, startChatServer } from './support/chat-server.js';
import { finish, ModelScript, PAUSE, text, toolCall } from './support/model-script.js';
import { describeOnBackends } from './support/per-backend.js';
import { recordingCommits } from './support/recording-store.js';
import type { SdkVersion, TestMessage } from './support/sdk.js';
import { sdk6 } from './support/sdk-v6.js';
import { sdk7 } from './support/sdk-v7.js';

/** The text of a message's text parts. */
function textOf(message: TestMessage | undefined): string {
  return (message?.parts ?? [])
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');
}

/** `value` after a JSON round trip: what a store gives back of it. */
function asStored<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

for (const sdk of [sdk6, sdk7] as SdkVersion[]) {
  describeOnBackends(`${sdk.name} chats over HTTP`, (ctx) => {
    ctx.requiresChatWrites();
    let script: ModelScript;
    let chats: ChatStore<TestMessage>;
    let server: ChatServer;
    let commits: ReturnType<typeof recordingCommits>['commits'];
    beforeEach(async () => {
      script = new ModelScript();
      const recording = recordingCommits(ctx.store());
      commits = recording.commits;
      chats = ctx.chats<TestMessage>({}, recording.store);
      server = await startChatServer({ sdk, chats, script });
    });
    afterEach(async () => {
      await server.close();
    });
    const clientOf = (chatId: string) => sdk.chat({ id: chatId, api: `${server.url}/api/chat` });

    it('a multi-turn chat with a tool call is saved turn by turn, as the client saw it', async () => {
      const chatId = await chats.createChat({ userId: 'alice' });
      const client = clientOf(chatId);
      script.queue(
        [toolCall('call-1', 'weather', { city: 'Oslo' }), finish('tool-calls')],
        [...text('t1', 'It is snowing ', 'in Oslo.'), finish('stop')],
      );
      await client.sendMessage({ text: 'What is the weather in Oslo?' });
      await server.settled();
      script.queue([...text('t2', 'Take a warm coat.'), finish('stop')]);
      await client.sendMessage({ text: 'What should I wear?' });
      await server.settled();

      const stored = await chats.loadChat(chatId);
      expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      expect(stored).toEqual(asStored(client.messages));
      expect(stored[1]?.parts).toContainEqual(
        expect.objectContaining({
          type: 'tool-weather',
          state: 'output-available',
          input: { city: 'Oslo' },
          output: { city: 'Oslo', forecast: 'snow' },
        }),
      );
      expect(textOf(stored[3])).toBe('Take a warm coat.');
      // The third model call (the second turn) was sent the first turn as the store kept it.
      expect(JSON.stringify(script.prompts[2])).toContain('snow');
      expect(JSON.stringify(script.prompts[2])).toContain('It is snowing in Oslo.');
      await expect(sdk.validate(stored)).resolves.toHaveLength(4);
      const [chat] = await chats.listChats({ userId: 'alice' });
      expect(chat).toMatchObject({
        id: chatId,
        title: 'What is the weather in Oslo?',
        messageCount: 4,
      });
      expect(commits.some((c) => c.replace !== undefined)).toBe(false);
    });

    it('a continuation after a client-side tool replaces the reply it continues (truncate + append)', async () => {
      const chatId = await chats.createChat({ userId: 'alice' });
      const client = clientOf(chatId);
      script.queue(
        [toolCall('call-2', 'confirm', { question: 'Book the 9:40 train?' }), finish('tool-calls')],
        [...text('t3', 'Booked the 9:40 train.'), finish('stop')],
      );
      await client.sendMessage({ text: 'Book me a train to Bergen' });
      await server.settled();

      const stored = await chats.loadChat(chatId);
      expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(stored).toEqual(asStored(client.messages));
      const reply = stored[1] as TestMessage;
      expect(reply.parts).toContainEqual(
        expect.objectContaining({ type: 'tool-confirm', state: 'output-available', output: 'yes' }),
      );
      expect(textOf(reply)).toBe('Booked the 9:40 train.');
      expect(partialReply(reply)).toBeUndefined();
      // user message, first reply, then the continuation: one message dropped, one added.
      const replyWrites = commits.filter(
        (c) => c.append?.[0] && (c.append[0] as TestMessage).id === reply.id,
      );
      expect(
        replyWrites.map((c) => ({ truncate: c.truncate, appended: c.append?.length })),
      ).toEqual([
        { truncate: undefined, appended: 1 },
        { truncate: 1, appended: 1 },
      ]);
      expect(commits.some((c) => c.replace !== undefined)).toBe(false);
      await expect(sdk.validate(stored)).resolves.toHaveLength(2);
    });

    it('a reply aborted mid-stream is kept as far as it got, marked aborted, and the chat goes on', async () => {
      const chatId = await chats.createChat({ userId: 'alice' });
      const client = clientOf(chatId);
      script.queue([
        ...text('t4', 'The first ten digits', PAUSE, ' are 3.141592653'),
        finish('stop'),
      ]);
      const sending = client.sendMessage({ text: 'Recite pi' });
      await script.paused();
      await fetch(`${server.url}/api/chat/${chatId}/stop`, { method: 'POST' });
      await sending;
      await server.settled();

      const stored = await chats.loadChat(chatId);
      expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(textOf(stored[1])).toBe('The first ten digits');
      expect(textOf(stored[1])).toBe(textOf(client.messages[1]));
      expect(partialReply(stored[1])).toEqual({ reason: 'aborted' });
      await expect(sdk.validate(stored)).resolves.toHaveLength(2);

      script.queue([...text('t5', 'Sorry: 3.141592653.'), finish('stop')]);
      await client.sendMessage({ text: 'Go on' });
      await server.settled();
      const after = await chats.loadChat(chatId);
      expect(after.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      expect(JSON.stringify(script.prompts[1])).toContain('The first ten digits');
      await expect(sdk.validate(after)).resolves.toHaveLength(4);
    });

    it('a client disconnect keeps the partial reply, marked interrupted', async () => {
      const chatId = await chats.createChat({ userId: 'alice' });
      const client = clientOf(chatId);
      script.queue([...text('t6', 'Once upon', PAUSE, ' a time'), finish('stop')]);
      const sending = client.sendMessage({ text: 'Tell me a story' });
      await script.paused();
      await client.stop();
      await sending;
      await server.settled();

      const stored = await chats.loadChat(chatId);
      expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(textOf(stored[1])).toBe('Once upon');
      expect(partialReply(stored[1])).toEqual({ reason: 'interrupted' });
      await expect(sdk.validate(stored)).resolves.toHaveLength(2);
    });

    it('a double submit is a conflict: the message and its reply are saved once', async () => {
      const chatId = await chats.createChat({ userId: 'alice' });
      const message = { id: 'msg-twice', role: 'user', parts: [{ type: 'text', text: 'Hello!' }] };
      const post = async () => {
        const response = await fetch(`${server.url}/api/chat`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: chatId, message }),
        });
        await response.text();
        return response.status;
      };
      script.queue([...text('t7', 'Hi there.'), finish('stop')]);
      const statuses = await Promise.all([post(), post()]);
      await server.settled();
      expect(statuses.sort()).toEqual([200, 409]);
      expect(await post()).toBe(409); // again, after its reply landed
      const stored = await chats.loadChat(chatId);
      expect(stored.map((m) => [m.role, textOf(m)])).toEqual([
        ['user', 'Hello!'],
        ['assistant', 'Hi there.'],
      ]);
      expect(script.prompts).toHaveLength(1); // one reply was generated
      await expect(sdk.validate(stored)).resolves.toHaveLength(2);
    });
  });
}
