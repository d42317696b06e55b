// The example as a client uses it, with fetch: chats streamed and saved over two turns, a
// double submit refused, the sidebar and a chat loaded, a client that leaves mid-reply
// finding the whole reply later, and a restart; on the memory store, the file store and
// PostgreSQL by URL. The AI SDK's mock model stands in for the AI Gateway.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '@sessionkit/core';
import { commitRejection } from '@sessionkit/test-backends';
import { MockLanguageModelV4 } from 'ai/test';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  finish,
  ModelScript,
  PAUSE,
  text,
  toolCall,
} from '../../../packages/ai-sdk/test/support/model-script.js';
import { POSTGRES_URL, postgresAvailable } from '../../../packages/postgres/test/env.js';
import { startChatServer } from '../src/server.js';

const work = mkdtempSync(join(tmpdir(), 'sessionkit-ai-sdk-chat-example-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Message = { id: string; role: string; parts: { type: string; text?: string }[] };

/** Why chats cannot be written at `storeUrl` (its commit lacks operationId/truncate), or undefined. */
async function cannotWriteChats(storeUrl: string): Promise<string | undefined> {
  const store = await openStore<unknown>(storeUrl);
  try {
    return await commitRejection(store as never, { operationId: 'probe', truncate: 0 });
  } finally {
    await store.close();
  }
}

function userMessage(id: string, text: string): Message {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** The text of a message's text parts. */
function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

class Client {
  constructor(
    readonly url: string,
    readonly userId: string,
  ) {}

  /** POST /api/chat; the status, and the text deltas of the stream read to its end. */
  async send(id: string, message: Message, signal?: AbortSignal) {
    const response = await fetch(`${this.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user-id': this.userId },
      body: JSON.stringify({ id, message }),
      signal,
    });
    const body = await response.text();
    const deltas = body
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)))
      .filter((chunk) => chunk.type === 'text-delta')
      .map((chunk) => chunk.delta);
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      text: deltas.join(''),
    };
  }

  async get(path: string) {
    const response = await fetch(`${this.url}${path}`, { headers: { 'x-user-id': this.userId } });
    return { status: response.status, body: await response.json() };
  }
}

/** The whole example against `storeUrl`; `durable` stores are also read after a restart. */
async function chatOn(storeUrl: string, durable: boolean): Promise<void> {
  const script = new ModelScript();
  const model = new MockLanguageModelV4({ doStream: script.doStream as never });
  let server = await startChatServer({ storeUrl, model, port: 0 });
  try {
    const alice = new Client(server.url, 'alice');
    script.queue(
      [toolCall('call-1', 'weather', { city: 'Oslo' }), finish('tool-calls')],
      [...text('t1', 'Snow in Oslo', ' today.'), finish('stop')],
      [...text('t2', 'A warm coat.'), finish('stop')],
    );
    const first = await alice.send('trip-1', userMessage('m1', 'Weather in Oslo?'));
    expect(first).toEqual({ status: 200, type: 'text/event-stream', text: 'Snow in Oslo today.' });
    const second = userMessage('m2', 'What should I wear?');
    expect((await alice.send('trip-1', second)).text).toBe('A warm coat.');
    expect((await alice.send('trip-1', second)).status).toBe(409); // sent twice

    const sidebar = await alice.get('/api/chats');
    expect(sidebar.body.chats).toEqual([
      expect.objectContaining({ id: 'trip-1', title: 'Weather in Oslo?', messageCount: 4 }),
    ]);
    expect((await new Client(server.url, 'bob').get('/api/chats')).body.chats).toEqual([]);
    expect((await alice.get('/api/chats?query=coat')).body.chats).toHaveLength(1);
    const chat = await alice.get('/api/chat/trip-1');
    expect(chat.body.map((m: Message) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(chat.body[1].parts).toContainEqual(
      expect.objectContaining({ type: 'tool-weather', output: { city: 'Oslo', forecast: 'snow' } }),
    );
    expect((await alice.get('/api/chat/no-such-chat')).status).toBe(404);

    // The client leaves mid-reply; the server reads the stream on, and saves all of it.
    script.queue([...text('t3', 'Pack gloves', PAUSE, ' and a hat.'), finish('stop')]);
    const leaving = new AbortController();
    const left = alice.send('trip-1', userMessage('m3', 'Anything else?'), leaving.signal);
    await script.paused();
    leaving.abort();
    await expect(left).rejects.toThrow();
    script.resume();
    const messages = await eventually(async () => {
      const body = (await alice.get('/api/chat/trip-1')).body as Message[];
      return body.length === 6 ? body : undefined;
    });
    expect(textOf(messages[5])).toBe('Pack gloves and a hat.');
    expect(messages[5]).not.toHaveProperty('partial');

    if (durable) {
      await server.close();
      server = await startChatServer({ storeUrl, model, port: 0 });
      const restarted = await new Client(server.url, 'alice').get('/api/chat/trip-1');
      expect(restarted.body).toEqual(messages);
    }
  } finally {
    await server.close();
  }
}

/** `read()`'s first defined result, read again every 20 ms for up to 10 s. */
async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the reply was not saved within 10 s');
}

/** Runs the example on `storeUrl`, or skips loudly where the store cannot keep chats yet. */
async function runOn(
  ctx: { skip(): void },
  storeUrl: string,
  name: string,
  durable: boolean,
): Promise<void> {
  const missing = await cannotWriteChats(storeUrl);
  if (missing !== undefined) {
    console.warn(`\n!!! SKIPPED: the ai-sdk-chat example on ${name}: ${missing}\n`);
    ctx.skip();
  }
  await chatOn(storeUrl, durable);
}

describe('examples/ai-sdk-chat', () => {
  it('memory: chats stream, save, list and load', async (ctx) => {
    await runOn(ctx, 'memory:', 'memory', false);
  });

  it('file store: the same, and the chats survive a restart', async (ctx) => {
    await runOn(ctx, `file:${join(work, 'chats')}`, 'the file store', true);
  });

  it('PostgreSQL by URL: the same code, the same chats', async (ctx) => {
    if (!postgresAvailable('the ai-sdk-chat example on PostgreSQL is skipped')) ctx.skip();
    const schema = `sk_example_ai_${process.pid}_${Date.now()}`;
    try {
      await runOn(ctx, `${POSTGRES_URL}?schema=${schema}`, 'PostgreSQL', true);
    } finally {
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});
