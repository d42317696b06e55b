// The README's demo: a coding agent fixing a flaky test, with tool calls and their output,
// a merged branch, a diverged one and one that can still be merged.
import type { Store } from '@sessionkit/core';
import { fullStore } from './serve-seed.js';

/** The demo session's title (the screenshot checks it is shown). */
export const DEMO_TITLE = 'Fix the flaky upload test';

const TEST_OUTPUT = [
  '> api@2.3.0 test',
  '> vitest run test/upload.test.ts',
  '',
  ' ✓ test/upload.test.ts > accepts a small file (12 ms)',
  ' ✓ test/upload.test.ts > rejects an empty body (3 ms)',
  ' × test/upload.test.ts > resumes an interrupted upload (5003 ms)',
  '   → Test timed out in 5000ms.',
  ...Array.from({ length: 30 }, (_, i) => `     at Upload.resume (src/upload.ts:${80 + i}:11)`),
].join('\n');

/** Fills `store` with the demo session, its branches and a few others; returns its id. */
export async function seedDemo(raw: Store<unknown>): Promise<string> {
  const store = fullStore(raw);
  const root = await store.create({
    id: 'demo-upload-fix',
    title: DEMO_TITLE,
    folder: '~/work/api',
    model: 'claude-sonnet-4-5',
    provider: 'anthropic',
    metadata: { ticket: 'API-311', branch: 'fix/upload-resume' },
    state: { plan: ['reproduce', 'find the race', 'fix', 'run the suite'], step: 3 },
    mode: 'build',
  });
  await store.commit(root.id, {
    append: [
      {
        role: 'user',
        content: 'The upload test fails about one run in ten on CI. Can you find out why?',
      },
      {
        role: 'assistant',
        content: 'I will run it first to see the failure.',
        toolCalls: [
          {
            id: 'call-run',
            name: 'run_tests',
            arguments: { file: 'test/upload.test.ts', repeat: 20 },
          },
        ],
      },
      { role: 'tool', toolCallId: 'call-run', name: 'run_tests', content: TEST_OUTPUT },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'The resume path times out. Reading the retry loop.' }],
        toolCalls: [
          {
            id: 'call-read',
            name: 'read_file',
            arguments: { path: 'src/upload.ts', lines: [80, 112] },
          },
        ],
      },
      {
        role: 'tool',
        toolCallId: 'call-read',
        name: 'read_file',
        content: 'while (!done) {\n  await sleep(1000)\n  done = await probe(id)\n}',
      },
      {
        role: 'assistant',
        content:
          'Found it: `resume` polls every second with no deadline, and the test waits 5 s. When the server is slow the poll outlives the test. I will use the server’s `Retry-After` and give the loop a deadline.',
      },
    ],
    increment: { turnCount: 3, tokenCount: 18_420, costUsd: 0.0912 },
  });
  const backoff = await store.branch(root.id, 6);
  await store.commit(backoff.id, {
    append: [
      { role: 'user', content: 'Try exponential backoff instead.' },
      {
        role: 'assistant',
        content: 'Backoff from 100 ms, capped at 2 s; the suite passed 50 runs out of 50.',
      },
    ],
    patch: { title: 'Exponential backoff' },
    increment: { turnCount: 1, tokenCount: 4100, costUsd: 0.02 },
  });
  await store.merge(backoff.id);
  const clock = await store.branch(root.id, 4);
  await store.commit(clock.id, {
    append: [{ role: 'user', content: 'Could we fake the clock in the test instead?' }],
    patch: { title: 'Fake timers' },
  });
  const docs = await store.branch(root.id, 8);
  await store.commit(docs.id, {
    append: [{ role: 'user', content: 'Now document the deadline option.' }],
    patch: { title: 'Document the deadline' },
  });
  await store.saveRuntimeStatus(root.id, { suite: 'passing', runs: 50, failures: 0 });
  await store.append(root.id, 'tool.run', { tool: 'run_tests', ms: 5210 });
  await store.append(root.id, 'tool.run', { tool: 'read_file', ms: 4 });
  await store.append(root.id, 'merge', { from: backoff.id });
  for (let i = 1; i <= 6; i++) {
    await store.create({
      id: `demo-other-${i}`,
      title: `Earlier chat ${i}`,
      folder: '~/work/api',
      updatedAt: new Date(Date.now() - i * 3.6e6),
    });
  }
  return root.id;
}
