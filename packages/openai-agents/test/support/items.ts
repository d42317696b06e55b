// OpenAI Agents SDK items as the runner stores them, for the tests.
import type { AgentInputItem } from '@openai/agents-core';
import { assistantMessage, functionCall } from '@openai/agents-core/testing';

export const userText = (text: string): AgentInputItem => ({
  type: 'message',
  role: 'user',
  content: text,
});

export const userParts = (text: string): AgentInputItem => ({
  type: 'message',
  role: 'user',
  content: [{ type: 'input_text', text }],
});

export const assistantText = (text: string): AgentInputItem => assistantMessage(text);

export const toolCall = (callId: string, args: Record<string, unknown>): AgentInputItem =>
  functionCall('lookup', args, { callId });

export const toolResult = (callId: string, text: string): AgentInputItem => ({
  type: 'function_call_result',
  name: 'lookup',
  callId,
  status: 'completed',
  output: { type: 'text', text },
});

/** Items as a store gives them back: JSON, so `undefined` properties are gone. */
export const asStored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
