// A chat server on Node's `http`, no framework, for `useChat` sending only the last message
// (`prepareSendMessagesRequest` returning `{ id, message }`), with the AI SDK 7.x:
//   POST /api/chat      streams a reply and saves the turn (@sessionkit/ai-sdk)
//   GET  /api/chats     the user's chats for a sidebar (?query=…&startAfter=<JSON cursor>)
//   GET  /api/chat/:id  one chat's messages
// The user is the `x-user-id` header here; a real server takes it from its session cookie
// or token, and checks that a chat id it is sent belongs to that user.
import { createServer } from 'node:http';
import { openChatStore } from '@sessionkit/ai-sdk';
import { isSessionKitError } from '@sessionkit/core';
import {
  convertToModelMessages,
  createUIMessageStreamResponse,
  generateId,
  isStepCount,
  streamText,
  tool,
  toUIMessageStream,
  validateUIMessages,
} from 'ai';
import { z } from 'zod';

/** Where chats live when no URL is given: the file store, in ./.chats. */
export const DEFAULT_STORE_URL = 'file:./.chats';

const tools = {
  weather: tool({
    description: 'The weather in a city.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, forecast: city === 'Oslo' ? 'snow' : 'sunny' }),
  }),
};

/**
 * Starts the server on `port` (0: any free port) of `host`, with chats in the store at
 * `storeUrl` and replies from `model` (a model id for the AI Gateway, or a model object).
 * Returns its URL, the chat store and `close()`.
 */
export async function startChatServer({
  storeUrl = DEFAULT_STORE_URL,
  model,
  port = 3000,
  host = '127.0.0.1',
}) {
  const chats = await openChatStore(storeUrl, { folderPrefix: 'chat/' });
  const routes = chatRoutes(chats, model);
  const server = createServer((req, res) => {
    routes(req, res).catch((error) => sendError(res, error));
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  return {
    url: `http://${host}:${server.address().port}`,
    chats,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await chats.close();
    },
  };
}

function chatRoutes(chats, model) {
  return async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const userId = req.headers['x-user-id'] || 'demo';
    const chatPath = /^\/api\/chat\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'POST' && url.pathname === '/api/chat') {
      const { id, message } = JSON.parse(await bodyOf(req));
      await streamReply(res, { chats, model, userId, id, message });
    } else if (req.method === 'GET' && url.pathname === '/api/chats') {
      const startAfter = url.searchParams.get('startAfter');
      const page = await chats.listChats({
        userId,
        query: url.searchParams.get('query') ?? undefined,
        startAfter: startAfter ? JSON.parse(startAfter) : undefined,
        limit: 20,
      });
      sendJson(res, 200, { chats: page, next: page.length === 20 ? page.at(-1) : null });
    } else if (req.method === 'GET' && chatPath) {
      sendJson(res, 200, await chats.loadChat(decodeURIComponent(chatPath[1])));
    } else {
      sendJson(res, 404, { error: 'no such route' });
    }
  };
}

/** Takes the message into the chat (a new chat id starts a chat), streams and saves the reply. */
async function streamReply(res, { chats, model, userId, id, message }) {
  const messages = await validateUIMessages({
    messages: await receive(chats, userId, id, message),
    tools,
  });
  const result = streamText({
    model,
    messages: await convertToModelMessages(messages, { tools, ignoreIncompleteToolCalls: true }),
    tools,
    stopWhen: isStepCount(5),
  });
  const stream = toUIMessageStream({
    stream: result.stream,
    originalMessages: messages,
    generateMessageId: generateId,
    onEnd: chats.onEnd(id),
  });
  await send(res, createUIMessageStreamResponse({ stream }));
}

/** `chats.receiveMessage`, creating the chat first when `useChat` made a new id. */
async function receive(chats, userId, id, message) {
  try {
    return await chats.receiveMessage(id, message);
  } catch (error) {
    if (!isSessionKitError(error, 'not_found')) throw error;
  }
  try {
    await chats.createChat({ userId, chatId: id });
  } catch (error) {
    if (!isSessionKitError(error, 'exists')) throw error; // its other request made it
  }
  return chats.receiveMessage(id, message);
}

/**
 * Writes a web `Response` on a Node response. A client that leaves stops the writing, not
 * the reading: the stream runs to its end, so the whole reply is saved and the client finds
 * it when it loads the chat again.
 */
async function send(res, response) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  for await (const chunk of response.body) {
    if (!res.destroyed) res.write(chunk);
  }
  res.end();
}

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A failed request's answer: sessionkit's error codes as HTTP statuses. */
function sendError(res, error) {
  const status = statusOf(error);
  if (status === 500) console.error(error); // only the log sees what went wrong inside
  if (res.headersSent) res.destroy();
  else sendJson(res, status, { error: status === 500 ? 'internal error' : error.message });
}

function statusOf(error) {
  if (isSessionKitError(error, 'conflict')) return 409; // a double submit
  if (isSessionKitError(error, 'not_found')) return 404;
  if (isSessionKitError(error, 'invalid_argument') || error instanceof SyntaxError) return 400;
  return 500;
}

async function bodyOf(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}
