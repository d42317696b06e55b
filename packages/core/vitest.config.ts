import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The enforceMax spool test measures retained heap after explicit collections.
    execArgv: ['--expose-gc'],
    testTimeout: 60_000,
  },
});
