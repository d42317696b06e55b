// What each chat store method reads and writes, on every backend, without a model: chats
// and their titles, windows, a user's listing, the active stream, double submits from two
// server processes, lost replies, and the end-of-stream callback's cases.
import { isSessionKitError } from '@sessionkit/core';
import { withLostReplies } from '@sessionkit/test-backends';
import { describe, expect, it } from 'vitest';
import { type ChatEndEvent, type ChatStore, partialReply } from '../src/index.js';
import { describeOnBackends } from './support/per-backend.js';
import type { TestMessage } from './support/sdk.js';

let sequence = 0;
/** A user message with this text (and a new id). */
function userMessage(text: string, id = `u-${++sequence}`): TestMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}
/** An assistant message with this text. */
function assistantMessage(text: string, id = `a-${++sequence}`): TestMessage {
  return {
    id,
    role: 'assistant',
    parts: [{ type: 'step-start' }, { type: 'text', text, state: 'done' }],
  };
}
/** The event the SDK passes when a reply completed. */
function completed(
  responseMessage: TestMessage,
  isContinuation = false,
): ChatEndEvent<TestMessage> {
  return {
    responseMessage,
    isContinuation,
    isAborted: false,
    outcome: { status: 'completed' },
    finishReason: 'stop',
  };
}

/** Resolves with the code of the SessionKitError `promise` rejects with. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (e) {
    if (isSessionKitError(e)) return e.code;
    throw e;
  }
  throw new Error('expected a SessionKitError, but it resolved');
}

describeOnBackends('chat store', (ctx) => {
  const chatsOf = (): ChatStore<TestMessage> => ctx.chats<TestMessage>();

  it('reads what needs no chat writes: new chats, empty histories, listings, the active stream', async () => {
    const chats = chatsOf();
    const chatId = await chats.createChat({ userId: 'reader', title: 'Plans' });
    expect(await chats.loadChat(chatId)).toEqual([]);
    expect(await chats.loadChat(chatId, { last: 5 })).toEqual([]);
    expect(await chats.activeStream(chatId)).toBeNull();
    await chats.setActiveStream(chatId, 'stream-1');
    expect(await chats.activeStream(chatId)).toBe('stream-1');
    await chats.setActiveStream(chatId, null);
    expect(await chats.activeStream(chatId)).toBeNull();
    expect(await chats.listChats({ userId: 'reader' })).toEqual([
      expect.objectContaining({ id: chatId, title: 'Plans', userId: 'reader', messageCount: 0 }),
    ]);
    await chats.deleteChat(chatId);
    expect(await codeOf(chats.loadChat(chatId))).toBe('not_found');
    expect(await codeOf(chats.deleteChat(chatId))).toBe('not_found');
  });

  describe('writing', () => {
    ctx.requiresChatWrites();

    it('keeps messages and replies in order; windows read the last ones', async () => {
      const chats = chatsOf();
      const chatId = await chats.createChat({ userId: 'writer' });
      const turns = [
        userMessage('Plan a trip to Lisbon'),
        assistantMessage('Three days: Alfama, Belém, Sintra.'),
        userMessage('And the food?'),
        assistantMessage('Pastéis de nata and bacalhau.'),
      ];
      for (const message of turns) {
        if (message.role === 'user') await chats.saveUserMessage(chatId, message);
        else await chats.onEnd(chatId)(completed(message));
      }
      expect(await chats.loadChat(chatId)).toEqual(turns);
      expect(await chats.loadChat(chatId, { last: 2 })).toEqual(turns.slice(2));
      expect(await chats.loadChat(chatId, { last: 10 })).toEqual(turns);
    });

    it('the first user message titles an untitled chat; a given title stays', async () => {
      const chats = chatsOf();
      const untitled = await chats.createChat({ userId: 'titles' });
      await chats.saveUserMessage(untitled, {
        id: 'u-title',
        role: 'user',
        parts: [
          { type: 'text', text: 'Compare   the okapi' },
          { type: 'file', mediaType: 'image/png', url: 'https://example.com/okapi.png' },
          { type: 'text', text: 'and the giraffe' },
        ],
      });
      await chats.saveUserMessage(untitled, userMessage('A later question'));
      const titled = await chats.createChat({ userId: 'titles', title: 'Zoo plans' });
      await chats.saveUserMessage(titled, userMessage('Which zoo has okapis?'));
      const greeted = await chats.createChat({ userId: 'titles' });
      await chats.onEnd(greeted)(completed(assistantMessage('Hello! How can I help?')));
      await chats.saveUserMessage(greeted, userMessage('Find me a zoo'));
      const titles = Object.fromEntries(
        (await chats.listChats({ userId: 'titles' })).map((chat) => [chat.id, chat.title]),
      );
      expect(titles).toEqual({
        [untitled]: 'Compare the okapi and the giraffe',
        [titled]: 'Zoo plans',
        [greeted]: 'Find me a zoo',
      });
    });

    it('a double submit is a conflict and writes nothing, before and after its reply', async () => {
      const chats = chatsOf();
      const chatId = await chats.createChat();
      const message = userMessage('Hello?');
      await chats.saveUserMessage(chatId, message);
      expect(await codeOf(chats.saveUserMessage(chatId, message))).toBe('conflict');
      await chats.onEnd(chatId)(completed(assistantMessage('Hi!')));
      expect(await codeOf(chats.saveUserMessage(chatId, structuredClone(message)))).toBe(
        'conflict',
      );
      expect((await chats.loadChat(chatId)).map((m) => m.id)).toEqual([
        message.id,
        expect.any(String),
      ]);
    });

    it('of one message sent at once through two server processes, one copy lands', async () => {
      const chats = chatsOf();
      const other = ctx.chats<TestMessage>({}, await ctx.peer());
      const chatId = await chats.createChat();
      const message = userMessage('Only once, please');
      const results = await Promise.allSettled([
        chats.saveUserMessage(chatId, message),
        other.saveUserMessage(chatId, message),
      ]);
      const codes = results.map((r) =>
        r.status === 'fulfilled' ? 'saved' : isSessionKitError(r.reason) ? r.reason.code : 'other',
      );
      expect(codes.sort()).toEqual(['conflict', 'saved']);
      expect(await chats.loadChat(chatId)).toEqual([message]);
    });

    it('a user message meets the reply being saved: both land, in order', async () => {
      const chats = chatsOf();
      const chatId = await chats.createChat();
      await chats.saveUserMessage(chatId, userMessage('First'));
      const reply = assistantMessage('First answer');
      const next = userMessage('Second');
      await Promise.all([
        chats.onEnd(chatId)(completed(reply)),
        chats.saveUserMessage(chatId, next),
      ]);
      const ids = (await chats.loadChat(chatId)).map((m) => m.id);
      expect(ids).toHaveLength(3);
      expect(new Set(ids.slice(1))).toEqual(new Set([reply.id, next.id]));
    });

    it('saveUserMessage takes user UIMessages of an existing chat only', async () => {
      const chats = chatsOf();
      const chatId = await chats.createChat();
      const bad = [
        assistantMessage('not a user message'),
        { id: 'no-parts', role: 'user' },
        { role: 'user', parts: [] },
        { id: '', role: 'user', parts: [{ type: 'text', text: 'no id' }] },
        null,
      ];
      for (const message of bad) {
        expect(await codeOf(chats.saveUserMessage(chatId, message as TestMessage))).toBe(
          'invalid_argument',
        );
      }
      const notJson = { ...userMessage('x'), metadata: { at: 10n } } as unknown as TestMessage;
      expect(await codeOf(chats.saveUserMessage(chatId, notJson))).toBe('invalid_argument');
      expect(await codeOf(chats.saveUserMessage('no-such-chat', userMessage('x')))).toBe(
        'not_found',
      );
      expect(await chats.loadChat(chatId)).toEqual([]);
    });

    it('a continuation replaces the message it continues; one that was never saved is appended', async () => {
      const chats = chatsOf();
      const chatId = await chats.createChat();
      const question = userMessage('Book a table');
      await chats.saveUserMessage(chatId, question);
      const first = assistantMessage('Which time?');
      await chats.onEnd(chatId)(completed(first));
      const continued = {
        ...first,
        parts: [...first.parts, { type: 'text', text: ' Booked for 8.' }],
      };
      await chats.onEnd(chatId)(completed(continued, true));
      expect(await chats.loadChat(chatId)).toEqual([question, continued]);

      const unsaved = assistantMessage('Continued, but never saved before');
      await chats.onEnd(chatId)(completed(unsaved, true));
      expect(await chats.loadChat(chatId)).toEqual([question, continued, unsaved]);
    });

    it('a reply cut short is kept and marked; a continuation that completes it drops the mark', async () => {
      const chats = chatsOf();
      const chatId = await chats.createChat();
      await chats.saveUserMessage(chatId, userMessage('Go'));
      const partial = assistantMessage('Half an ans');
      const cases: [Partial<ChatEndEvent<TestMessage>>, string][] = [
        [{ isAborted: true, outcome: { status: 'aborted' } }, 'aborted'],
        [{ outcome: { status: 'failed' } }, 'failed'],
        [{ outcome: { status: 'unknown' }, finishReason: undefined }, 'interrupted'], // 6.x disconnect
        [{ outcome: { status: 'unknown' }, isCancelled: true }, 'interrupted'], // 7.x disconnect
      ];
      for (const [event, reason] of cases) {
        await chats.onEnd(chatId)({ ...completed(partial, true), ...event });
        const [last] = await chats.loadChat(chatId, { last: 1 });
        expect({ text: last?.parts[1]?.text, mark: partialReply(last) }).toEqual({
          text: 'Half an ans',
          mark: { reason },
        });
      }
      await chats.onEnd(chatId)(
        completed({ ...partial, partial: { reason: 'aborted' } } as TestMessage, true),
      );
      const messages = await chats.loadChat(chatId);
      expect(messages).toHaveLength(2);
      expect(partialReply(messages[1])).toBeUndefined();
      expect(messages[1]).toEqual(partial);
    });

    it('a reply with nothing in it is not saved; a reply without an id gets one', async () => {
      const chats = chatsOf();
      const chatId = await chats.createChat();
      await chats.saveUserMessage(chatId, userMessage('Hi'));
      const empty = {
        id: 'a-empty',
        role: 'assistant',
        parts: [{ type: 'step-start' }],
      } as TestMessage;
      await chats.onEnd(chatId)({ ...completed(empty), isAborted: true });
      expect(await chats.loadChat(chatId)).toHaveLength(1);
      await chats.onEnd(chatId)(completed(assistantMessage('No id', '')));
      const [, reply] = await chats.loadChat(chatId);
      expect(reply?.id).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('receiveMessage saves a user message, and puts a continued reply in place without writing', async () => {
      const chats = chatsOf();
      const chatId = await chats.createChat();
      const question = userMessage('Is it raining?');
      expect(await chats.receiveMessage(chatId, question)).toEqual([question]);
      const reply = assistantMessage('Let me check.');
      await chats.onEnd(chatId)(completed(reply));
      const withToolOutput = {
        ...reply,
        parts: [...reply.parts, { type: 'text', text: '(checked)' }],
      };
      expect(await chats.receiveMessage(chatId, withToolOutput)).toEqual([
        question,
        withToolOutput,
      ]);
      expect(await chats.receiveMessage(chatId, withToolOutput, { last: 1 })).toEqual([
        withToolOutput,
      ]);
      expect(await chats.loadChat(chatId)).toEqual([question, reply]);
      const other = assistantMessage('Not the last one');
      expect(await chats.receiveMessage(chatId, other)).toEqual([question, reply, other]);
      const next = userMessage('Thanks');
      expect(await chats.receiveMessage(chatId, next, { last: 2 })).toEqual([reply, next]);
      const system = { id: 's1', role: 'system', parts: [] } as TestMessage;
      expect(await codeOf(chats.receiveMessage(chatId, system))).toBe('invalid_argument');
    });

    it("lists a user's chats newest first, searches their text parts, pages by keyset", async () => {
      const chats = ctx.chats<TestMessage>({ folderPrefix: 'chat/' });
      const others = chatsOf();
      const ids: string[] = [];
      for (const topic of ['okapi', 'giraffe', 'zebra']) {
        const chatId = await chats.createChat({ userId: 'lister' });
        await chats.saveUserMessage(chatId, userMessage(`Tell me about the ${topic}`));
        ids.push(chatId);
      }
      await chats.onEnd(ids[0] as string)(
        completed({
          id: 'a-tool',
          role: 'assistant',
          parts: [
            {
              type: 'tool-lookup',
              toolCallId: 'c1',
              state: 'output-available',
              input: { q: 'stripes' },
              output: 'none',
            },
            { type: 'text', text: 'The okapi lives in the Ituri rainforest.' },
          ],
        }),
      );
      await others.createChat({ userId: 'lister' }); // folder "lister", not "chat/lister"
      const listed = await chats.listChats({ userId: 'lister' });
      expect(new Set(listed.map((c) => c.id))).toEqual(new Set(ids));
      // Newest first; chats written in the same millisecond by id, descending.
      const newestFirst = [...listed].sort(
        (a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (a.id < b.id ? 1 : -1),
      );
      expect(listed).toEqual(newestFirst);
      expect(listed.find((c) => c.id === ids[0])).toMatchObject({
        userId: 'lister',
        title: 'Tell me about the okapi',
        messageCount: 2,
      });
      const search = async (query: string) =>
        (await chats.listChats({ userId: 'lister', query })).map((c) => c.id);
      expect(await search('ITURI')).toEqual([ids[0]]);
      expect(await search('stripes')).toEqual([]); // a tool input, not text
      expect(await search('zebra')).toEqual([ids[2]]);

      const paged: string[] = [];
      let cursor: { updatedAt: string; id: string } | undefined;
      for (;;) {
        const page = await chats.listChats({ userId: 'lister', limit: 1, startAfter: cursor });
        if (page.length === 0) break;
        paged.push(...page.map((c) => c.id));
        cursor = JSON.parse(JSON.stringify(page.at(-1))); // as a client sends it back
      }
      expect(paged).toEqual(listed.map((c) => c.id));
      expect(await chats.listChats({ userId: 'nobody' })).toEqual([]);
    });

    it('the active stream is runtime status: commits leave it, and onEnd can clear it', async () => {
      const chats = chatsOf();
      const chatId = await chats.createChat();
      await chats.setActiveStream(chatId, 'stream-a');
      await chats.saveUserMessage(chatId, userMessage('Hi'));
      await chats.onEnd(chatId)(completed(assistantMessage('Hello')));
      expect(await chats.activeStream(chatId)).toBe('stream-a');
      await chats.saveUserMessage(chatId, userMessage('Again'));
      await chats.onEnd(chatId, { clearActiveStream: true })(
        completed(assistantMessage('Hello again')),
      );
      expect(await chats.activeStream(chatId)).toBeNull();
      expect(await chats.loadChat(chatId)).toHaveLength(4);
    });

    it('a write whose reply is lost is sent again under its operation id and lands once', async () => {
      const lossy = withLostReplies(ctx.store());
      const chats = ctx.chats<TestMessage>({}, lossy.store);
      const chatId = await chats.createChat();
      lossy.loseNextReply();
      await chats.saveUserMessage(chatId, userMessage('Are you there?'));
      lossy.loseNextReply();
      await chats.onEnd(chatId)(completed(assistantMessage('Yes.')));
      const continued = assistantMessage('Yes, still.');
      await chats.onEnd(chatId)(completed(continued));
      lossy.loseNextReply();
      await chats.onEnd(chatId)(
        completed({ ...continued, parts: [...continued.parts, { type: 'text', text: '!' }] }, true),
      );
      expect(lossy.lost).toBe(3);
      expect((await chats.loadChat(chatId)).map((m) => m.role)).toEqual([
        'user',
        'assistant',
        'assistant',
      ]);
    });
  });
});
