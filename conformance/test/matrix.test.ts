import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { newReport, recordResult } from '../src/harness.js';
import { formatMatrix, matrixPassed } from '../src/matrix.js';
import type { ConformanceReport } from '../src/types.js';

const cli = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'dist', 'cli.js');
const work = mkdtempSync(join(tmpdir(), 'sk-matrix-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A report of `adapter` whose Store tests passed and whose Brancher tests are as given. */
function reportOf(adapter: string, brancher: 'passed' | 'failed' | 'not implemented') {
  const report = newReport(adapter);
  report.runtime = { node: '22.1.0', label: `${adapter} server 7` };
  for (const name of ['create', 'load']) {
    recordResult(report, { spec: 'store', capability: 'Store', name, status: 'passed' });
  }
  recordResult(report, {
    spec: 'brancher',
    capability: 'Brancher',
    name: 'branch copies the prefix',
    status: brancher,
  });
  return report;
}

describe('formatMatrix', () => {
  it('puts each report in a column and each capability in a row', () => {
    const text = formatMatrix([reportOf('a', 'passed'), reportOf('b', 'not implemented')]);
    const lines = text.split('\n');
    expect(lines[0]).toBe(
      '| capability | a · a server 7 · node 22.1.0 | b · b server 7 · node 22.1.0 |',
    );
    expect(lines).toContain('| `Store` | ✅ 2/2 | ✅ 2/2 |');
    expect(lines).toContain('| `Brancher` | ✅ 1/1 | — |');
    // A capability neither report ran is shown as not run, not as passed.
    expect(lines).toContain('| `Pruner` | · | · |');
  });

  it('lists the failing tests of a failed column and is not a pass', () => {
    const failed = reportOf('c', 'failed');
    const text = formatMatrix([reportOf('a', 'passed'), failed]);
    expect(text).toContain('| `Brancher` | ✅ 1/1 | ❌ 0/1 |');
    expect(text).toContain('- [brancher] branch copies the prefix');
    expect(matrixPassed([reportOf('a', 'passed')])).toBe(true);
    expect(matrixPassed([reportOf('a', 'passed'), failed])).toBe(false);
  });

  it('does not count a skipped test as a pass', () => {
    const report = reportOf('d', 'passed');
    recordResult(report, { spec: 'store', capability: 'Store', name: 'x', status: 'skipped' });
    expect(formatMatrix([report])).toContain('| `Store` | ✅ 2/2, 1 skipped |');
    expect(matrixPassed([report])).toBe(false);
  });
});

describe('sessionkit-conformance --matrix', () => {
  function run(args: string[]) {
    const r = spawnSync(process.execPath, [cli, '--matrix', ...args], { encoding: 'utf8' });
    return { code: r.status, out: r.stdout, err: r.stderr };
  }
  const write = (name: string, report: ConformanceReport) => {
    const file = join(work, name);
    writeFileSync(file, JSON.stringify(report));
    return file;
  };

  it('prints the table and exits 0 when every run passed, 1 when one failed', () => {
    const ok = write('ok.json', reportOf('a', 'passed'));
    const bad = write('bad.json', reportOf('b', 'failed'));
    const pass = run([ok]);
    expect(pass.code).toBe(0);
    expect(pass.out).toContain('| `Brancher` | ✅ 1/1 |');
    const fail = run([ok, bad]);
    expect(fail.code).toBe(1);
    expect(fail.out).toContain('❌ 0/1');
  });

  it('exits 2 with the file named when a report cannot be read, and on no files', () => {
    const missing = run([join(work, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('nope.json');
    expect(run([]).code).toBe(2);
  });
});
