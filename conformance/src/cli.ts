#!/usr/bin/env node
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ConformanceReport } from './types.js';
import { SPEC_NAMES } from './types.js';

const USAGE = `usage: sessionkit-conformance <module> [--report <file.json>] [--spec <name,name>] [--export <name>]

Runs the sessionkit conformance suite against the initializer that <module> exports
(default export, or the named export given by --export, or "initializer"). The module
may be JavaScript or TypeScript. No vitest config of your own is needed.

  --report <file>   also write the JSON report there
  --spec <names>    only these specs (${SPEC_NAMES.join(', ')})
  --export <name>   the export holding the initializer

Exit code: 0 when every test of every implemented capability passed, 1 otherwise.`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      report: { type: 'string' },
      spec: { type: 'string' },
      export: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals.length !== 1) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const modulePath = resolve(positionals[0]!);
  const specs = values.spec ? values.spec.split(',').map((s) => s.trim()) : undefined;
  for (const s of specs ?? []) {
    if (!(SPEC_NAMES as readonly string[]).includes(s)) {
      console.error(
        `sessionkit-conformance: unknown spec "${s}" (known: ${SPEC_NAMES.join(', ')})`,
      );
      return 2;
    }
  }
  const work = mkdtempSync(join(tmpdir(), 'sessionkit-conformance-'));
  const reportFile = values.report ? resolve(values.report) : join(work, 'report.json');
  try {
    const entry = new URL('./index.js', import.meta.url).href;
    const testFile = join(work, 'conformance.test.mjs');
    // The generated test imports the author's module by absolute URL, so it resolves
    // its own dependencies from where it lives, and vitest transforms TypeScript.
    writeFileSync(
      testFile,
      [
        `import { runConformance } from ${JSON.stringify(entry)};`,
        `const mod = await import(${JSON.stringify(pathToFileURL(modulePath).href)});`,
        `const name = ${JSON.stringify(values.export ?? '')};`,
        `const init = name ? mod[name] : (mod.default ?? mod.initializer);`,
        `if (!init) throw new Error(${JSON.stringify(`${modulePath} exports no initializer (default export, "initializer", or --export <name>)`)});`,
        `runConformance(init, { reportFile: ${JSON.stringify(reportFile)}, specs: ${JSON.stringify(specs ?? null)} ?? undefined });`,
        '',
      ].join('\n'),
    );
    const { startVitest } = await import('vitest/node');
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
    if (values.report) console.log(`report written to ${reportFile}`);
    return failed === 0 && passed > 0 ? 0 : 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
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
