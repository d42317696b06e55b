// One turn of the example in a process of its own, offline: the SDK's ScriptedModel stands
// in for OpenAI. TURN=first asks about an order (the model calls the tool, then answers);
// TURN=followUp answers from what the stored conversation says the tool returned, so it
// only knows the answer when the first process's turn was restored. Prints the result and
// what the model was sent, as JSON.
import {
  assistantMessage,
  functionCall,
  modelResponder,
  ScriptedModel,
} from '@openai/agents/testing';
import { chatTurn } from '../src/support-agent.js';

const followUp = modelResponder(({ request }) => {
  const results = request.input.filter((item) => item.type === 'function_call_result');
  const order = results.length === 1 ? JSON.parse(results[0].output.text) : undefined;
  return [
    assistantMessage(order ? `It arrives ${order.eta}, with ${order.carrier}.` : 'I do not know.'),
  ];
});
const steps = {
  first: [
    [functionCall('lookup_order', { orderId: '1042' }, { callId: 'call_1042' })],
    [assistantMessage('Order 1042 has shipped.')],
  ],
  followUp: [followUp],
};
const model = new ScriptedModel(steps[process.env.TURN]);
const result = await chatTurn({
  storeUrl: process.env.SESSIONKIT_STORE_URL,
  sessionId: process.env.SESSION_ID,
  input: process.env.QUESTION,
  model,
});
model.assertComplete();
console.log(JSON.stringify({ ...result, modelInput: model.lastCall.request.input }));
