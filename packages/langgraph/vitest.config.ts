import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // LangGraph's validation suite (@langchain/langgraph-checkpoint-validation) is written
    // against vitest's globals (describe, beforeAll …).
    globals: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
