import { describe, expect, it } from 'vitest';
import { runConformanceSuite } from '../src/index.js';
import { BROKEN_VARIANTS, brokenInitializer } from './broken/variants.js';
import { memoryInitializer } from './memory-initializer.js';

// The suite is only worth something if it fails broken adapters. Each variant below is
// the memory adapter with one plausible bug; the tests meant to catch it must fail.
describe('the conformance suite catches broken adapters', () => {
  it('has at least 8 broken variants', () => {
    expect(BROKEN_VARIANTS.length).toBeGreaterThanOrEqual(8);
  });

  it('passes the unbroken memory adapter (the control)', async () => {
    const report = await runConformanceSuite(memoryInitializer);
    expect(report.tests.filter((t) => t.status === 'failed')).toEqual([]);
    expect(report.tests.filter((t) => t.status === 'passed').length).toBeGreaterThan(150);
  });

  for (const variant of BROKEN_VARIANTS) {
    const where = variant.caughtBy.map((c) => `${c.spec} › ${c.test}`).join('; ');
    it(`catches ${variant.name} (${variant.bug}) by ${where}`, async () => {
      const specs = [...new Set(variant.caughtBy.map((c) => c.spec))];
      const report = await runConformanceSuite(brokenInitializer(variant), { specs });
      for (const { spec, test } of variant.caughtBy) {
        const result = report.tests.find((t) => t.spec === spec && t.name === test);
        expect(result, `no test "${test}" in spec "${spec}"`).toBeDefined();
        expect(result?.status, `${spec} › ${test} should fail for ${variant.name}`).toBe('failed');
      }
    });
  }
});
