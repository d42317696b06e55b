#!/usr/bin/env node
// The supported Node versions besides the one CI runs on, from the npm registry's `node`
// package: the quickstart and the memory and file conformance suites on each newer major,
// and the CommonJS consumer on the lowest supported version. A break on any supported
// Node fails the run. Builds must exist (pnpm build).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The newest release of each supported major, and the lowest supported release. */
const NEWER = ['node@22.23.3', 'node@24.21.0'];
const LOWEST = 'node@20.19.6';

/** Runs `args` under the given Node (downloaded once by npx), in `dir` of the repo. */
function onNode(node, dir, args, env = {}) {
  const started = Date.now();
  const r = spawnSync('npx', ['--yes', node, ...args], {
    cwd: join(root, dir),
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, FORCE_COLOR: '0', ...env },
    timeout: 15 * 60_000,
    killSignal: 'SIGKILL',
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const ok = r.status === 0;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's colour codes
  const plain = `${r.stdout}`.replace(/\x1b\[[0-9;]*m/g, '');
  const summary = plain.match(/Tests\s+\d+ passed[^\n]*/)?.[0] ?? '';
  console.log(
    `${ok ? 'ok  ' : 'FAIL'} ${node} ${dir}: ${args.join(' ')} ${summary} (${seconds} s)`,
  );
  if (!ok) {
    console.log(`${r.stdout}`.slice(-6000));
    console.error(`${r.stderr}`.slice(-4000) || r.error?.message || `signal ${r.signal}`);
  }
  return ok;
}

const vitest = (dir) => join(root, dir, 'node_modules', 'vitest', 'vitest.mjs');
let failed = 0;
for (const node of NEWER) {
  const sessions = mkdtempSync(join(tmpdir(), 'sessionkit-quickstart-'));
  try {
    const steps = [
      () =>
        onNode(node, 'examples/quickstart', ['src/main.js'], {
          SESSIONKIT_STORE_URL: `file:${sessions}`,
        }),
      () =>
        onNode(node, 'conformance', [
          vitest('conformance'),
          'run',
          'test/memory.conformance.test.ts',
        ]),
      () =>
        onNode(node, 'packages/file', [
          vitest('packages/file'),
          'run',
          'test/file.conformance.test.ts',
        ]),
    ];
    for (const step of steps) if (!step()) failed += 1;
  } finally {
    rmSync(sessions, { recursive: true, force: true });
  }
}
if (!onNode(LOWEST, '.', ['scripts/require-packages.cjs'])) failed += 1;
process.exitCode = failed === 0 ? 0 : 1;
