// The conformance runs' audit: every span of every test is checked against the leak
// vocabulary as the test ends, and the run's metrics are compared with its spans.
import { afterEach, describe, expect, it } from 'vitest';
import { SPAN_ATTRIBUTES as A, METRIC_NAMES, STORE_METHODS } from '../../src/index.js';
import { type AuditRules, auditSpan } from './audit.js';
import type { RecordingTelemetry } from './telemetry.js';

/**
 * Registers, in the calling test file, an `afterEach` that audits and forgets the spans
 * of each test, and a last test that fails on any problem found and checks that the
 * duration histogram counted every span, per method and outcome.
 */
export function auditConformanceRun(
  title: string,
  telemetry: RecordingTelemetry,
  rules: AuditRules,
): void {
  const problems = new Set<string>();
  /** `method error.type` → spans seen. */
  const spans = new Map<string, number>();
  afterEach(() => {
    for (const span of telemetry.spans()) {
      for (const p of auditSpan(span, rules)) problems.add(p);
      const key = `${span.attributes[A.operation]} ${span.attributes[A.errorType] ?? 'ok'}`;
      spans.set(key, (spans.get(key) ?? 0) + 1);
    }
    telemetry.resetSpans();
  });

  describe(`${title} › what the suite recorded`, () => {
    it('every span keeps to the leak vocabulary', () => {
      expect([...problems].slice(0, 50)).toEqual([]);
    });

    it('every contract method was called, and the duration histogram counted each span', async () => {
      const seen = new Set([...spans.keys()].map((k) => k.split(' ')[0]));
      expect([...STORE_METHODS].filter((m) => !seen.has(m))).toEqual([]);
      const counted = new Map<string, number>();
      for (const p of await telemetry.points(METRIC_NAMES.duration)) {
        const key = `${p.attributes[A.operation]} ${p.attributes[A.errorType] ?? 'ok'}`;
        counted.set(key, (p.value as { count: number }).count);
      }
      expect(Object.fromEntries(counted)).toEqual(Object.fromEntries(spans));
      const conflicts = [...spans].filter(([k]) => k.endsWith(' conflict'));
      const conflictSpans = conflicts.reduce((sum, [, n]) => sum + n, 0);
      expect(conflictSpans).toBeGreaterThan(0);
      expect(await telemetry.total(METRIC_NAMES.conflicts)).toBe(conflictSpans);
    });
  });
}
