#!/usr/bin/env node
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { formatMatrix, matrixPassed } from './matrix.js';
import type { ConformanceReport } from './types.js';
import { SPEC_NAMES } from './types.js';

const USAGE = `usage: sessionkit-conformance <module> [--report <file.json>] [--spec <name,name>] [--export <name>] [--seed <n>] [--runs <n>]
       sessionkit-conformance --matrix <report.json> [<report.json> …]

Runs the sessionkit conformance suite against the initializer that <module> exports
(default export, or the named export given by --export, or "initializer"). The module
may be JavaScript or TypeScript. No vitest config of your own is needed.

  --report <file>   also write the JSON report there
  --spec <names>    only these specs (${SPEC_NAMES.join(', ')})
  --export <name>   the export holding the initializer
  --seed <n>        replay the model-based spec with this seed (a failure prints it)
  --runs <n>        random sequences the model-based spec runs (default 25)
  --matrix          print the given JSON reports side by side as a Markdown table
                    (capability × run); exit 1 when any run failed or skipped a test.
                    SESSIONKIT_CONFORMANCE_LABEL, set when a report is written, names
                    the run's column (e.g. "postgres 16").

Exit code: 0 when every test of every implemented capability passed, 1 when any
failed (or the suite could not run), 2 for bad usage or a missing vitest (a peer
dependency: npm install -D vitest).`;

/** What the command line asked for, or the exit code of a usage error (already reported). */
interface CliRequest {
  modulePath: string;
  specs: string[] | undefined;
  exportName: string | undefined;
  reportPath: string | undefined;
}

async function main(): Promise<number> {
  if (process.argv[2] === '--matrix') return printMatrix(process.argv.slice(3));
  const request = parseCommandLine();
  if (typeof request === 'number') return request;
  const work = mkdtempSync(join(tmpdir(), 'sessionkit-conformance-'));
  const reportFile = request.reportPath ?? join(work, 'report.json');
  try {
    writeGeneratedTest(work, request, reportFile);
    const startVitest = await loadVitest();
    if (!startVitest) return 2;
    const vitest = await startVitest('test', [], {
      root: work,
      config: false,
      watch: false,
      include: ['conformance.test.mjs'],
      testTimeout: 600_000,
      hookTimeout: 600_000,
      server: { deps: { inline: [] } },
    });
    await vitest.close();
    let report: ConformanceReport;
    try {
      report = JSON.parse(readFileSync(reportFile, 'utf8')) as ConformanceReport;
    } catch {
      console.error(
        'sessionkit-conformance: the suite did not produce a report (see the errors above)',
      );
      return 1;
    }
    const failed = report.tests.filter((t) => t.status === 'failed').length;
    const passed = report.tests.filter((t) => t.status === 'passed').length;
    if (request.reportPath) console.log(`report written to ${reportFile}`);
    return failed === 0 && passed > 0 ? 0 : 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `--matrix <report.json…>`: the reports as one Markdown table on stdout. */
function printMatrix(files: string[]): number {
  if (files.length === 0) {
    console.error(USAGE);
    return 2;
  }
  const reports: ConformanceReport[] = [];
  for (const file of files) {
    try {
      reports.push(JSON.parse(readFileSync(file, 'utf8')) as ConformanceReport);
    } catch (e) {
      console.error(
        `sessionkit-conformance: cannot read report ${file}: ${e instanceof Error ? e.message : String(e)}`,
      );
      return 2;
    }
  }
  console.log(formatMatrix(reports));
  return matrixPassed(reports) ? 0 : 1;
}

/** The parsed command line; usage errors are printed and returned as exit code 2. */
function parseCommandLine(): CliRequest | number {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      report: { type: 'string' },
      spec: { type: 'string' },
      export: { type: 'string' },
      seed: { type: 'string' },
      runs: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    console.error(USAGE);
    return 2;
  }
  const modulePath = resolve(positionals[0]!);
  if (!existsSync(modulePath)) {
    console.error(`sessionkit-conformance: no such module: ${modulePath}`);
    return 2;
  }
  const specs = values.spec ? values.spec.split(',').map((s) => s.trim()) : undefined;
  for (const s of specs ?? []) {
    if (!(SPEC_NAMES as readonly string[]).includes(s)) {
      console.error(
        `sessionkit-conformance: unknown spec "${s}" (known: ${SPEC_NAMES.join(', ')})`,
      );
      return 2;
    }
  }
  if (!applyModelSettings(values.seed, values.runs)) return 2;
  return {
    modulePath,
    specs,
    exportName: values.export,
    reportPath: values.report ? resolve(values.report) : undefined,
  };
}

/**
 * `--seed` and `--runs` as the model-based spec reads them (from the environment, see
 * modelSettings); false after reporting a bad value.
 */
function applyModelSettings(seed: string | undefined, runs: string | undefined): boolean {
  for (const [flag, raw, env, min] of [
    ['seed', seed, 'SESSIONKIT_MODEL_SEED', Number.MIN_SAFE_INTEGER],
    ['runs', runs, 'SESSIONKIT_MODEL_RUNS', 1],
  ] as const) {
    if (raw === undefined) continue;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isSafeInteger(n) || n < min) {
      console.error(
        `sessionkit-conformance: --${flag} must be an integer${min === 1 ? ' ≥ 1' : ''}, got "${raw}"`,
      );
      return false;
    }
    process.env[env] = String(n);
  }
  return true;
}

/**
 * The test file vitest runs: it imports the author's module by absolute URL (so the module
 * resolves its own dependencies from where it lives, and vitest transforms TypeScript)
 * and runs the suite on its initializer.
 */
function writeGeneratedTest(work: string, request: CliRequest, reportFile: string): void {
  const entry = new URL('./index.js', import.meta.url).href;
  const { modulePath, specs } = request;
  writeFileSync(
    join(work, 'conformance.test.mjs'),
    [
      `import { runConformance } from ${JSON.stringify(entry)};`,
      `const mod = await import(${JSON.stringify(pathToFileURL(modulePath).href)});`,
      `const name = ${JSON.stringify(request.exportName ?? '')};`,
      `const init = name ? mod[name] : (mod.default ?? mod.initializer);`,
      `if (!init) throw new Error(${JSON.stringify(`${modulePath} exports no initializer (default export, "initializer", or --export <name>)`)});`,
      `runConformance(init, { reportFile: ${JSON.stringify(reportFile)}, specs: ${JSON.stringify(specs ?? null)} ?? undefined });`,
      '',
    ].join('\n'),
  );
}

type StartVitest = typeof import('vitest/node').startVitest;

/** vitest's runner, or undefined (after a clear message) when the peer is not installed. */
async function loadVitest(): Promise<StartVitest | undefined> {
  try {
    return (await import('vitest/node')).startVitest;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw e;
    console.error(
      'sessionkit-conformance: vitest is not installed. It is a peer dependency of ' +
        '@sessionkit/conformance: npm install -D vitest',
    );
    return undefined;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(`sessionkit-conformance: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 2;
  },
);
