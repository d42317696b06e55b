import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The SDK's runner exports traces to OpenAI unless told not to; the tests are offline.
    env: { OPENAI_AGENTS_DISABLE_TRACING: '1' },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
