import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Every test works on its own key prefix (or its own server), so they can overlap:
    // S3 round trips, not CPU, bound each test.
    sequence: { concurrent: true },
    maxConcurrency: 4,
  },
});
