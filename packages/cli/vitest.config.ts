import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every test drives the built binary in child processes (and PostgreSQL), which is
    // slow on a loaded machine: generous limits, never timing assertions.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
