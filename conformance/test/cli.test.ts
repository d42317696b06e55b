import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConformanceReport } from '../src/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const cli = join(here, '..', 'dist', 'cli.js');
const work = mkdtempSync(join(tmpdir(), 'sk-cli-test-'));

function run(args: string[]) {
  // The CLI is what a third-party author runs: a separate process with no vitest config.
  const r = spawnSync(process.execPath, [cli, ...args], {
    cwd: work,
    encoding: 'utf8',
    timeout: 240_000,
  });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('sessionkit-conformance CLI', () => {
  it('runs the whole suite against a module and reports every capability passed', () => {
    const reportFile = join(work, 'memory.json');
    const { code, out } = run([join(here, 'fixtures', 'cli-memory.ts'), '--report', reportFile]);
    expect(out).toContain('sessionkit conformance report: memory');
    expect(code, out).toBe(0);
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as ConformanceReport;
    expect(report.adapter).toBe('memory');
    for (const [cap, summary] of Object.entries(report.capabilities)) {
      expect(summary.status, cap).toBe('passed');
      expect(summary.failed, cap).toBe(0);
    }
    expect(report.tests.filter((t) => t.status === 'passed').length).toBeGreaterThan(150);
  });

  it('exits 1 and names the failing tests for a broken adapter', () => {
    const reportFile = join(work, 'broken.json');
    const { code, out } = run([
      join(here, 'fixtures', 'cli-broken.ts'),
      '--export',
      'brokenRouter',
      '--spec',
      'session-router',
      '--report',
      reportFile,
    ]);
    expect(code, out).toBe(1);
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as ConformanceReport;
    expect(report.capabilities.SessionRouter.status).toBe('failed');
    expect(report.capabilities.Store.status).toBe('not run');
    const failed = report.tests.filter((t) => t.status === 'failed').map((t) => t.name);
    expect(failed).toContain('follow "tui" tracks the live session, a pin wins, "" clears');
    expect(out).toContain('follow "tui" tracks the live session');
  });

  it('rejects bad usage with exit code 2', () => {
    expect(run([]).code).toBe(2);
    expect(run([join(here, 'fixtures', 'cli-memory.ts'), '--spec', 'nope']).code).toBe(2);
  });
});
