// The README's smallest working example runs as written and prints what its comments say.
import { describe, expect, it } from 'vitest';
import { runReadmeExample } from '../../../scripts/readme-example.js';

describe('README', () => {
  it('the smallest working example prints what its comments say', async () => {
    const run = await runReadmeExample(
      new URL('../README.md', import.meta.url),
      'The smallest working example',
      { "from '@sessionkit/langgraph'": "from '../src/index.js'" },
    );
    expect(run.expected.length).toBeGreaterThan(0);
    expect(run.printed).toEqual(run.expected);
  });
});
