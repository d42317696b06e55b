#!/usr/bin/env node
// pnpm bench: every adapter whose server answers here, through the same workload, beside
// its raw ceiling, in one run; then docs/benchmarks.md and its SVG charts.
//   --quick            fewer turns, smaller stores (about a minute)
//   --only a,b         only these backends
//   --no-scale         skip PostgreSQL at 1,000,000 sessions
//   --out <dir>        where benchmarks.md goes (default: the repository's docs/)
import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BACKENDS } from './backends/index.mjs';
import { rawRatioChart, turnsChart } from './charts.mjs';
import { benchmarksPage } from './report.mjs';
import { conversation, list20, loadVsParse, rawRate, turnRate, withStore } from './workload.mjs';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'no-scale': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const quick = values.quick;
const settings = {
  histories: [10, 1000, 10000],
  turns: quick ? 60 : 300,
  loadHistory: quick ? 2000 : 10000,
  listSessions: quick ? 2000 : 10000,
  bytesTurns: 200,
  scaleSizes: quick ? [10_000, 100_000] : [10_000, 1_000_000],
  scaleTurns: quick ? 100 : 300,
};
const out = values.out ?? fileURLToPath(new URL('../../docs', import.meta.url));
const only = values.only?.split(',').map((s) => s.trim());

async function measure(backend) {
  const result = { name: backend.name, ceiling: backend.ceiling, turns: [] };
  for (const history of settings.histories) {
    const ops = await withStore(backend, ({ store }) => turnRate(store, history, settings.turns));
    const rawOps = backend.raw ? await rawRate(backend.raw, history, settings.turns) : undefined;
    result.turns.push({ history, ops, rawOps });
    console.log(
      `  turns at history ${history}: ${ops.toFixed(0)}/s (raw ${rawOps?.toFixed(0) ?? '—'}/s)`,
    );
  }
  result.load = await withStore(backend, ({ store }) => loadVsParse(store, settings.loadHistory));
  console.log(`  load: ${JSON.stringify(result.load)}`);
  result.list = await withStore(backend, ({ store }) =>
    list20(
      store,
      Math.min(settings.listSessions, backend.listSessions ?? Infinity),
      backend.createConcurrency,
    ),
  );
  console.log(`  list: ${JSON.stringify(result.list)}`);
  result.bytes = await withStore(backend, async ({ store, storedBytes }) => {
    if (!storedBytes) return undefined;
    const c = await conversation(store, settings.bytesTurns);
    return {
      perMessage: (await storedBytes()) / c.messages,
      jsonPerMessage: c.jsonBytes / c.messages,
    };
  });
  return result;
}

function environment() {
  const cpu = cpus();
  const pgVersion = (() => {
    try {
      return execSync('psql --version', { encoding: 'utf8' }).trim();
    } catch {
      return undefined;
    }
  })();
  return {
    date: new Date().toISOString().slice(0, 10),
    machine: `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${process.platform}`,
    versions: [`Node ${process.versions.node}`, pgVersion].filter(Boolean).join(', '),
    bytesTurns: settings.bytesTurns,
    scaleTurns: settings.scaleTurns,
  };
}

const results = [];
const failures = [];
let scale;
for (const backend of BACKENDS) {
  if (only && !only.includes(backend.name)) continue;
  const available = await backend.available();
  if (available !== true) {
    console.log(`${backend.name}: skipped, ${available}`);
    continue;
  }
  console.log(`${backend.name}:`);
  try {
    results.push(await measure(backend));
  } catch (e) {
    // One backend failing leaves the others' figures; the page says what failed.
    console.error(`${backend.name}: failed: ${e.message}`);
    failures.push(`${backend.name}: ${e.message}`);
    await backend.end?.();
    continue;
  }
  try {
    if (backend.scale && !values['no-scale']) {
      scale = await backend.scale({ sizes: settings.scaleSizes, turns: settings.scaleTurns });
    }
  } finally {
    await backend.end?.();
  }
}
mkdirSync(join(out, 'benchmarks'), { recursive: true });
writeFileSync(join(out, 'benchmarks', 'turns.svg'), await turnsChart(results));
writeFileSync(join(out, 'benchmarks', 'raw-ratio.svg'), await rawRatioChart(results));
const options = `${settings.turns} timed turns per figure, load of ${settings.loadHistory} messages, list of ${settings.listSessions} sessions${quick ? ' (--quick)' : ''}`;
writeFileSync(
  join(out, 'benchmarks.md'),
  benchmarksPage({ results, scale, failures, environment: environment(), options }),
);
console.log(`wrote ${join(out, 'benchmarks.md')} and its charts`);
if (failures.length > 0) {
  console.error(`failed: ${failures.join('; ')}`);
  process.exitCode = 1;
}
