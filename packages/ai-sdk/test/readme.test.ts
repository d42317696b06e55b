// The README's examples run as written (with the SDK's mock models standing in for OpenAI)
// and print what their comments say: the smallest one and the 7.x and 6.x wiring.
import { describe, expect, it } from 'vitest';
import { runReadmeExample } from '../../../scripts/readme-example.js';

const README = new URL('../README.md', import.meta.url);
const PACKAGE = { "from '@sessionkit/ai-sdk'": "from '../src/index.js'" };
const V7 = {
  ...PACKAGE,
  "import { openai } from '@ai-sdk/openai';":
    "import { openai } from './support/readme-models.js';",
  // The package's own devDependency `ai` is 6.x; 7.x is installed as `ai-v7`.
  "from 'ai';": "from 'ai-v7';",
};
const V6 = {
  ...PACKAGE,
  "import { openai } from '@ai-sdk/openai';":
    "import { openaiV3 as openai } from './support/readme-models.js';",
};

describe('README', () => {
  for (const [heading, replace] of [
    ['The smallest working example', V7],
    ['With `ai` 7.x', V7],
    ['With `ai` 6.x', V6],
  ] as const) {
    it(`"${heading}" prints what its comments say`, async () => {
      const run = await runReadmeExample(README, heading, replace);
      expect(run.expected.length).toBeGreaterThan(0);
      expect(run.printed).toEqual(run.expected);
    });
  }
});
