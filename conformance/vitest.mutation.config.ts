// The conformance suite run against the memory adapter's and core's SOURCE (not their
// dist), for mutation testing (`pnpm mutation`, see MUTATION.md): Stryker mutates
// packages/memory/src and core's adapter rules, and only this suite may kill a mutant.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: src('.'),
  resolve: {
    alias: [
      { find: /^@sessionkit\/core$/, replacement: src('../packages/core/src/index.ts') },
      {
        find: /^@sessionkit\/core\/adapter$/,
        replacement: src('../packages/core/src/adapter.ts'),
      },
      { find: /^@sessionkit\/memory$/, replacement: src('../packages/memory/src/index.ts') },
    ],
  },
  test: {
    include: ['test/memory.conformance.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
