// An order-support agent with one tool, whose conversation lives in a sessionkit store.
// Only the store URL names the backend: `file:./.sessions` keeps the conversation across
// restarts, a `postgres://…` URL keeps it in PostgreSQL; the code is the same.
import { Agent, run, tool } from '@openai/agents';
import { SessionKitSession } from '@sessionkit/openai-agents';
import { z } from 'zod';

const ORDERS = {
  1042: { status: 'shipped', carrier: 'DHL', eta: 'Thursday' },
  1043: { status: 'packing', carrier: 'UPS', eta: 'next week' },
};

/** The tool the agent calls to look an order up. */
export const lookupOrder = tool({
  name: 'lookup_order',
  description: 'The status, carrier and expected delivery day of an order.',
  parameters: z.object({ orderId: z.string() }),
  execute: async ({ orderId }) => {
    const order = ORDERS[orderId];
    return order ? JSON.stringify(order) : `No order ${orderId}.`;
  },
});

/** The agent; `model` defaults to the SDK's (an OpenAI model, OPENAI_API_KEY needed). */
export function supportAgent(model) {
  return new Agent({
    name: 'Order support',
    instructions: 'Answer questions about orders briefly. Look orders up with lookup_order.',
    tools: [lookupOrder],
    ...(model === undefined ? {} : { model }),
  });
}

/**
 * One turn of the conversation `sessionId` kept at `storeUrl`: the runner reads the
 * stored items, runs the agent, and stores the turn (question, tool call and result,
 * answer). A later process with the same URL and id continues the conversation.
 */
export async function chatTurn({ storeUrl, sessionId, input, model }) {
  const session = await SessionKitSession.fromUrl(storeUrl, {
    sessionId,
    session: { title: 'Order support' },
  });
  try {
    const result = await run(supportAgent(model), input, { session });
    return { answer: result.finalOutput, items: (await session.getItems()).length };
  } finally {
    await session.close();
  }
}
