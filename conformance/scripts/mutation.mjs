#!/usr/bin/env node
// `pnpm mutation`: StrykerJS mutates packages/memory/src and core's adapter rules
// (adapter-rules.ts, history-lineage.ts, and the kit's write plans) and runs only the conformance suite against
// their source (conformance/vitest.mutation.config.ts). StrykerJS 10 needs Node 22, so it
// runs on the `node` package of the npm registry, pinned below. Then the JSON report is
// scored per target; the exit code is 1 when a target is under the threshold.
//
//   pnpm mutation                 full run, report in reports/mutation/mutation.json
//   pnpm mutation --score-only    only score an existing report
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const NODE = 'node@22.23.3';
// DESIGN's target; SESSIONKIT_MUTATION_THRESHOLD lowers it while survivors are worked off.
const THRESHOLD = Number(process.env.SESSIONKIT_MUTATION_THRESHOLD || 90);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const report = join(root, 'reports', 'mutation', 'mutation.json');
const TARGETS = [
  {
    name: 'memory adapter (packages/memory/src)',
    match: (f) => f.startsWith('packages/memory/src/'),
  },
  {
    name: "core adapter rules (adapter-rules.ts, history-lineage.ts, the kit's write plans)",
    match: (f) =>
      f === 'packages/core/src/adapter-rules.ts' ||
      f === 'packages/core/src/history-lineage.ts' ||
      f.startsWith('packages/core/src/kit/'),
  },
];

const started = Date.now();
if (!process.argv.includes('--score-only')) {
  const stryker = join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
  const r = spawnSync(
    'npx',
    ['--yes', NODE, stryker, 'run', 'conformance/stryker.config.json', ...process.argv.slice(2)],
    {
      cwd: root,
      stdio: 'inherit',
      // A fixed seed for the model-based spec, so two runs measure the same suite.
      env: {
        ...process.env,
        FORCE_COLOR: '0',
        SESSIONKIT_MODEL_SEED: process.env.SESSIONKIT_MODEL_SEED || '20261130',
      },
      // A safety net over Stryker's own per-mutant timeouts: the run is bounded.
      timeout: Number(process.env.SESSIONKIT_MUTATION_TIMEOUT_MS || 40 * 60_000),
      killSignal: 'SIGKILL',
    },
  );
  if (r.error) {
    console.error(`mutation: stryker did not finish: ${r.error.message}`);
    process.exit(1);
  }
  if (r.status !== 0) {
    console.error(`mutation: stryker exited with ${r.status ?? r.signal}`);
    process.exit(r.status || 1);
  }
}
if (!existsSync(report)) {
  console.error(`mutation: no report at ${relative(root, report)}`);
  process.exit(1);
}

const files = JSON.parse(readFileSync(report, 'utf8')).files;
let failed = false;
console.log('\nmutation score (killed + timeout over all but ignored mutants):');
for (const target of TARGETS) {
  const counts = {};
  for (const [file, data] of Object.entries(files)) {
    const rel = relative(root, join(root, file)).split('\\').join('/');
    if (!target.match(rel)) continue;
    for (const m of data.mutants) counts[m.status] = (counts[m.status] ?? 0) + 1;
  }
  const all = Object.values(counts).reduce((a, b) => a + b, 0) - (counts.Ignored ?? 0);
  const detected = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
  const score = all === 0 ? 0 : (100 * detected) / all;
  const detail = Object.entries(counts)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  console.log(`  ${target.name}: ${score.toFixed(2)} % (${detected}/${all}; ${detail})`);
  if (all === 0 || score < THRESHOLD) failed = true;
}
console.log(`  run time ${((Date.now() - started) / 1000).toFixed(0)} s, threshold ${THRESHOLD} %`);
process.exit(failed ? 1 : 0);
