// What the README's examples get for `openai('gpt-4.1-mini')`: the SDK's mock models,
// answering every call with one sentence about okapis.
import { MockLanguageModelV3 } from 'ai/test';
import { MockLanguageModelV4 } from 'ai-v7/test';
import { finish, ModelScript, text } from './model-script.js';

const ANSWER = 'Okapis live in the Ituri rainforest.';

/** A script that answers `calls` model calls with the README's sentence. */
function answering(calls = 4): ModelScript {
  const script = new ModelScript();
  for (let i = 0; i < calls; i++) script.queue([...text(`t${i}`, ANSWER), finish('stop')]);
  return script;
}

/** For the 7.x examples: a `MockLanguageModelV4`. */
export function openai(_modelId: string): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: answering().doStream as unknown as MockLanguageModelV4['doStream'],
  });
}

/** For the 6.x example: a `MockLanguageModelV3`. */
export function openaiV3(_modelId: string): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: answering().doStream as unknown as MockLanguageModelV3['doStream'],
  });
}
