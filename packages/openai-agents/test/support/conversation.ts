// A two-turn conversation for the SDK's real runner, driven offline by ScriptedModel: a
// triage agent calls a tool, hands off to an expert who answers; the second turn is a
// follow-up question to the triage agent (a new process starts from it again).
import { Agent, handoff, tool } from '@openai/agents-core';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { z } from 'zod';

export const FIRST_QUESTION = 'What is the weather in Oslo?';
export const FOLLOW_UP = 'And tomorrow?';

/** What the model answers in each turn (one scripted step per model call). */
const SCRIPT = {
  first: (expertName: string) => [
    [functionCall('get_weather', { city: 'Oslo' }, { callId: 'call_weather' })],
    [functionCall(expertName, {}, { callId: 'call_handoff' })],
    [assistantMessage('Rain in Oslo today, 9 °C.')],
  ],
  followUp: () => [[assistantMessage('Dry tomorrow.')]],
};

/**
 * The agents of one process, for one turn: the triage agent and the expert share one
 * scripted model holding that turn's steps.
 */
export function weatherAgents(turn: 'first' | 'followUp') {
  const expert = new Agent({ name: 'Weather expert', instructions: 'Answer about weather.' });
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather of a city today.',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => `${city}: rain, 9 °C`,
  });
  const model = new ScriptedModel(
    turn === 'first' ? SCRIPT.first(handoff(expert).toolName) : SCRIPT.followUp(),
  );
  expert.model = model;
  const triage = new Agent({
    name: 'Triage',
    instructions: 'Look the weather up, then hand off to the expert.',
    model,
    tools: [getWeather],
    handoffs: [expert],
  });
  return { triage, expert, model };
}

/** The item types of the first turn, in order, as the runner stores them. */
export const FIRST_TURN_TYPES = [
  'message', // the question
  'function_call', // get_weather
  'function_call_result',
  'function_call', // the handoff
  'function_call_result',
  'message', // the expert's answer
];

/**
 * An agent whose output guardrail always trips: the runner keeps the turn's input and
 * tool items but not the blocked answer, through a history transaction when the session
 * has them. One tool call, then the answer the guardrail blocks.
 */
export function guardedAgent() {
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather of a city today.',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => `${city}: rain, 9 °C`,
  });
  const model = new ScriptedModel([
    [functionCall('get_weather', { city: 'Oslo' }, { callId: 'call_weather' })],
    [assistantMessage('Something the guardrail blocks.')],
  ]);
  const agent = new Agent({
    name: 'Guarded',
    model,
    tools: [getWeather],
    outputGuardrails: [
      {
        name: 'block everything',
        execute: async () => ({ outputInfo: null, tripwireTriggered: true }),
      },
    ],
  });
  return { agent, model };
}
