// node src/main.js "Where is order 1042?" — one turn of a conversation that survives
// restarts: run it again with a follow-up question and the agent sees the earlier turns.
// SESSIONKIT_STORE_URL picks the store (default: the file store in ./.sessions), e.g.
// postgres://postgres@127.0.0.1:5432/test; SESSION_ID the conversation. The agent uses the
// SDK's default OpenAI model, so OPENAI_API_KEY must be set.
import { chatTurn } from './support-agent.js';

const storeUrl = process.env.SESSIONKIT_STORE_URL || 'file:./.sessions';
const sessionId = process.env.SESSION_ID || 'order-support';
const input = process.argv.slice(2).join(' ') || 'Where is order 1042?';

const { answer, items } = await chatTurn({ storeUrl, sessionId, input });
console.log(answer);
console.log(`(${items} items in ${sessionId} at ${storeUrl.split(':')[0]})`);
