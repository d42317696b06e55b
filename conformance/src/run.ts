import { writeFileSync } from 'node:fs';
import type { Store } from '@sessionkit/core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  executeTest,
  formatReport,
  newReport,
  recordResult,
  validateInitializer,
} from './harness.js';
import { ALL_SPECS, SPEC_TITLES } from './specs/index.js';
import type {
  ConformanceInitializer,
  ConformanceOptions,
  ConformanceReport,
  SpecName,
} from './types.js';
import { SPEC_NAMES } from './types.js';

function selectedSpecs(options: ConformanceOptions): SpecName[] {
  const wanted = options.specs ?? SPEC_NAMES;
  for (const s of wanted) {
    if (!SPEC_NAMES.includes(s))
      throw new TypeError(
        `@sessionkit/conformance: unknown spec "${s}" (known: ${SPEC_NAMES.join(', ')})`,
      );
  }
  return SPEC_NAMES.filter((s) => wanted.includes(s));
}

function finish(report: ConformanceReport, options: ConformanceOptions): void {
  report.finishedAt = new Date().toISOString();
  const file = options.reportFile ?? process.env.SESSIONKIT_CONFORMANCE_REPORT;
  if (file) writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  if (options.printReport !== false) console.log(`\n${formatReport(report)}\n`);
}

/**
 * Registers the conformance suite in the calling vitest file: one `describe` per spec
 * (`"<name> › Brancher"` …), one `it` per guarantee, a fresh store per test.
 * A capability the store lacks is reported as "not implemented" (the tests show as
 * skipped); when the run ends the capability report is printed and, with `reportFile`
 * or `$SESSIONKIT_CONFORMANCE_REPORT`, written as JSON.
 *
 * Returns the report object, filled in as the tests run. Throws `TypeError` at once
 * when the initializer is malformed.
 */
export function runConformance(
  init: ConformanceInitializer,
  options: ConformanceOptions = {},
): ConformanceReport {
  validateInitializer(init);
  // Stores are only handed back to the initializer's own hooks, so erasing S is safe.
  const base = init as unknown as ConformanceInitializer;
  const report = newReport(init.name);
  describe(`${init.name} › conformance`, () => {
    beforeAll(async () => {
      await init.beforeAll?.();
    }, 120_000);
    afterAll(async () => {
      await init.afterAll?.();
      finish(report, options);
    }, 120_000);
    for (const spec of selectedSpecs(options)) {
      describe(`${init.name} › ${SPEC_TITLES[spec]}`, () => {
        for (const test of ALL_SPECS[spec]) {
          const timeout = (init.timeoutMs ?? 30_000) * test.timeoutFactor + 30_000;
          it(
            test.name,
            async (ctx) => {
              const result = await executeTest(base, test);
              recordResult(report, result);
              if (result.status === 'failed') throw new Error(result.detail ?? 'failed');
              if (result.status !== 'passed') ctx.skip(`${result.status}: ${result.detail ?? ''}`);
            },
            timeout,
          );
        }
      });
    }
  });
  return report;
}

/**
 * Runs the suite in this process without registering vitest tests, and resolves with
 * the report. For tests of the suite itself (does it catch a broken adapter?) and for
 * tools; assertions still use vitest's `expect`, so call it from a vitest run.
 */
export async function runConformanceSuite<S extends Store>(
  init: ConformanceInitializer<S>,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  validateInitializer(init);
  const base = init as unknown as ConformanceInitializer;
  const report = newReport(init.name);
  await init.beforeAll?.();
  try {
    for (const spec of selectedSpecs(options)) {
      for (const test of ALL_SPECS[spec]) recordResult(report, await executeTest(base, test));
    }
  } finally {
    await init.afterAll?.();
  }
  finish(report, { printReport: false, ...options });
  return report;
}
