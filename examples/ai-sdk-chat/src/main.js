// node src/main.js — the chat server of server.js on http://127.0.0.1:3000.
// SESSIONKIT_STORE_URL picks the store (default: the file store in ./.chats), e.g.
// postgres://postgres@127.0.0.1:5432/test; MODEL the model (an AI Gateway id, default
// openai/gpt-4.1-mini, which needs AI_GATEWAY_API_KEY); PORT the port.
import { DEFAULT_STORE_URL, startChatServer } from './server.js';

const { url } = await startChatServer({
  storeUrl: process.env.SESSIONKIT_STORE_URL || DEFAULT_STORE_URL,
  model: process.env.MODEL || 'openai/gpt-4.1-mini',
  port: Number(process.env.PORT || 3000),
});
console.log(`chat server on ${url}: POST /api/chat, GET /api/chats, GET /api/chat/:id`);
