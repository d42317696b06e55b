#!/usr/bin/env node
// The capability × adapter matrix, from .github/conformance-matrix.json.
//   node scripts/matrix.mjs [name…]  run every adapter (or the named ones) whose servers
//                                    answer here, on this Node, then print the matrix;
//                                    exit 1 on any failure
//   node scripts/matrix.mjs plan     the GitHub Actions job matrix (JSON) for ci.yml
//   node scripts/matrix.mjs check    exit 1 when an adapter package is missing from the
//                                    matrix or an entry names a test file that is not there
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const matrix = JSON.parse(readFileSync(join(root, '.github/conformance-matrix.json'), 'utf8'));

/** Test settings from .env.example; a variable already set in the environment wins. */
function testEnv() {
  const env = { ...process.env };
  for (const line of readFileSync(join(root, '.env.example'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m && env[m[1]] === undefined) env[m[1]] = m[2];
  }
  return env;
}

/** One GitHub job per adapter × server version × Node version. */
function plan() {
  const include = [];
  for (const adapter of matrix.adapters) {
    for (const server of adapter.servers) {
      for (const node of matrix.node) {
        include.push({
          adapter: adapter.name,
          dir: adapter.dir,
          test: adapter.test,
          label: server.label,
          node,
          postgres: server.postgres ?? '',
          redis: server.redis ?? '',
          'redis-cluster': server['redis-cluster'] ?? '',
          minio: server.minio ?? '',
        });
      }
    }
  }
  return { include };
}

/** Whether something accepts TCP connections at the URL's host and port, within 2 s. */
function answers(url, defaultPort) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || defaultPort) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Services `local.requires` may name, and how to tell they are here. */
function requirementMet(requires, env) {
  switch (requires) {
    case undefined:
      return Promise.resolve(true);
    case 'postgres':
      return answers(env.SESSIONKIT_TEST_POSTGRES_URL, 5432);
    case 'redis':
      return answers(env.SESSIONKIT_TEST_REDIS_URL, 6379);
    case 'redis-server':
      return Promise.resolve(spawnSync('redis-server', ['--version']).status === 0);
    default:
      throw new Error(`conformance-matrix.json: unknown local requirement "${requires}"`);
  }
}

async function runLocally(names) {
  const unknown = names.filter((n) => !matrix.adapters.some((a) => a.name === n));
  if (unknown.length > 0) {
    console.error(`unknown adapter(s): ${unknown.join(', ')}`);
    return 2;
  }
  const env = testEnv();
  const work = mkdtempSync(join(tmpdir(), 'sessionkit-matrix-'));
  const reports = [];
  try {
    for (const adapter of matrix.adapters) {
      if (names.length > 0 && !names.includes(adapter.name)) continue;
      const { label, requires } = adapter.local;
      if (!(await requirementMet(requires, env))) {
        console.log(`- ${adapter.name}: skipped here (${requires} is not reachable)`);
        continue;
      }
      const report = join(work, `${adapter.name}.json`);
      console.log(`- ${adapter.name} (${label}): ${adapter.dir} › ${adapter.test}`);
      const r = spawnSync('pnpm', ['exec', 'vitest', 'run', adapter.test, '--silent'], {
        cwd: join(root, adapter.dir),
        env: { ...env, SESSIONKIT_CONFORMANCE_REPORT: report, SESSIONKIT_CONFORMANCE_LABEL: label },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      if (r.status !== 0) console.log(`  vitest exited ${r.status}`);
      reports.push(report);
    }
    const cli = join(root, 'conformance/dist/cli.js');
    const out = spawnSync(process.execPath, [cli, '--matrix', ...reports], { encoding: 'utf8' });
    process.stdout.write(`\n${out.stdout}`);
    process.stderr.write(out.stderr);
    return out.status ?? 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// Packages under packages/ that are not store adapters (core, the CLI, framework bindings).
const NOT_ADAPTERS = new Set([
  '@sessionkit/core',
  '@sessionkit/cli',
  '@sessionkit/openai-agents',
  '@sessionkit/otel',
  '@sessionkit/langgraph',
  '@sessionkit/ai-sdk',
]);

/** Problems with the matrix file: adapters left out, test files that do not exist. */
function check() {
  const problems = [];
  const listed = new Set(matrix.adapters.map((a) => a.package));
  for (const dir of readdirSync(join(root, 'packages'))) {
    const file = join(root, 'packages', dir, 'package.json');
    if (!existsSync(file)) continue;
    const { name } = JSON.parse(readFileSync(file, 'utf8'));
    if (!NOT_ADAPTERS.has(name) && !listed.has(name)) problems.push(`${name} is not in the matrix`);
  }
  for (const a of matrix.adapters) {
    if (!existsSync(join(root, a.dir, a.test))) problems.push(`${a.name}: no ${a.dir}/${a.test}`);
    if (!a.local?.label) problems.push(`${a.name}: no local.label`);
    if (!Array.isArray(a.servers) || a.servers.length === 0) problems.push(`${a.name}: no servers`);
  }
  for (const p of problems) console.error(`conformance-matrix.json: ${p}`);
  if (problems.length === 0) console.log(`conformance matrix: ${plan().include.length} jobs`);
  return problems.length === 0 ? 0 : 1;
}

if (process.argv[2] === 'check') process.exitCode = check();
else if (process.argv[2] === 'plan') console.log(JSON.stringify(plan()));
else process.exitCode = await runLocally(process.argv.slice(2));
