// An outside author's experience, end to end: the packed @sessionkit/core and
// @sessionkit/conformance (as `pnpm pack` publishes them) are installed with npm into a
// fresh project OUTSIDE the workspace, next to vitest from the registry, and the
// sessionkit-conformance CLI runs on a plain-JavaScript adapter written there. The npm
// cache makes every run after the first one fast; every child process is bounded.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConformanceReport } from '../src/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const conformanceDir = resolve(here, '..');
const repoRoot = resolve(conformanceDir, '..');
const coreDir = join(repoRoot, 'packages', 'core');
const vitestVersion = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  }
).devDependencies.vitest!;

/**
 * Type errors that published .d.ts files are known to have without @types/node, by file.
 * Each entry is a bug to fix (see the issue note); the test fails when a new file leaks
 * Node types and when a listed one is fixed (so the entry gets removed).
 */
const KNOWN_NODE_TYPE_LEAKS: string[] = [];

let work = '';
let author = '';
let tarballs: string[] = [];

function sh(cmd: string, args: string[], cwd: string, timeout = 300_000) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', npm_config_update_notifier: 'false' },
  });
  if (r.error) throw r.error;
  return { code: r.status, out: `${r.stdout}\n${r.stderr}`, stdout: r.stdout, stderr: r.stderr };
}

function npmInstall(cwd: string, args: string[]) {
  const r = sh(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...args],
    cwd,
  );
  if (r.code !== 0) throw new Error(`npm install failed in ${cwd}:\n${r.out}`);
}

/** A fresh npm project in `dir` holding the author's adapter. */
function project(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'my-adapter', private: true, type: 'module' }, null, 2)}\n`,
  );
  copyFileSync(join(here, 'fixtures', 'author', 'map-store.js'), join(dir, 'map-store.js'));
  return dir;
}

function cli(cwd: string, args: string[]) {
  return sh(join(cwd, 'node_modules', '.bin', 'sessionkit-conformance'), args, cwd, 240_000);
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'sk-packed-'));
  expect(work.startsWith(repoRoot)).toBe(false);
  for (const dir of [coreDir, conformanceDir]) {
    const r = sh('pnpm', ['pack', '--pack-destination', work], dir, 120_000);
    if (r.code !== 0) throw new Error(`pnpm pack failed in ${dir}:\n${r.out}`);
  }
  tarballs = ['sessionkit-core', 'sessionkit-conformance'].map((n) => join(work, `${n}-0.0.0.tgz`));
  author = project(join(work, 'author'));
  // What the README tells an author to run, with the packed tarballs for the two names.
  npmInstall(author, ['-D', ...tarballs, `vitest@${vitestVersion}`]);
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('an outside author with the packed packages', () => {
  it('runs the CLI on a plain-JS base-only adapter: exit 0, a report naming what a probe would enable', () => {
    const { code, out } = cli(author, ['./map-store.js', '--report', 'report.json']);
    expect(code, out).toBe(0);
    expect(out).toContain('sessionkit conformance report: map');
    const report = JSON.parse(
      readFileSync(join(author, 'report.json'), 'utf8'),
    ) as ConformanceReport;
    expect(report.adapter).toBe('map');
    expect(report.capabilities.Store).toMatchObject({ status: 'passed', failed: 0 });
    expect(report.capabilities.Store.passed).toBeGreaterThan(100);
    for (const cap of ['Committer', 'Brancher', 'HistoryReader', 'SessionRouter', 'Repairer']) {
      const summary = report.capabilities[cap as keyof ConformanceReport['capabilities']];
      expect(summary.status, cap).toBe('not implemented');
      expect(summary.passed, cap).toBe(0);
    }
    // No probes and no fault hooks were given: the tests they would enable are skipped
    // with the hook's name, in the JSON report and in the printed one.
    const probeTest = report.tests.find((t) => t.name === 'listing reads no message bodies');
    expect(probeTest).toMatchObject({ status: 'skipped' });
    expect(probeTest?.detail).toMatch(/probes\.messageBodyReads/);
    expect(out).toMatch(
      /- skipped \[store\] listing reads no message bodies: needs probes\.messageBodyReads/,
    );
    expect(report.tests.filter((t) => t.status === 'failed')).toEqual([]);

    // The README's sample report has the shape the CLI prints (counts aside).
    const readme = readFileSync(join(conformanceDir, 'README.md'), 'utf8');
    const sample = /```\n(sessionkit conformance report: [^\n]*\n[\s\S]*?)```/.exec(readme)?.[1];
    expect(sample, 'README has a sample report').toBeDefined();
    const shape = (line: string) =>
      line
        .replace(/report: .*/, 'report: NAME')
        .replace(/\d+/g, 'N')
        .replace(/\s+/g, ' ')
        .trim();
    const printed = new Set(out.split('\n').map(shape));
    for (const line of sample!.split('\n').filter((l) => l.trim() && l.trim() !== '…')) {
      expect(printed, `README sample line "${line}"`).toContain(shape(line));
    }
  });

  it('exits 1 and names the failing test for a broken adapter', () => {
    const { code, out } = cli(author, [
      './map-store.js',
      '--export',
      'noRevisionCheck',
      '--spec',
      'store',
      '--report',
      'broken.json',
    ]);
    expect(code, out).toBe(1);
    const report = JSON.parse(
      readFileSync(join(author, 'broken.json'), 'utf8'),
    ) as ConformanceReport;
    expect(report.capabilities.Store.status).toBe('failed');
    const failed = report.tests.filter((t) => t.status === 'failed').map((t) => t.name);
    expect(failed).toContain('save with a stale revision fails with conflict and writes nothing');
    expect(out).toContain('✗ [store] save with a stale revision fails with conflict');
  });

  it('exits 2 for bad usage, with a message', () => {
    const none = cli(author, []);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('usage: sessionkit-conformance');
    const spec = cli(author, ['./map-store.js', '--spec', 'nope']);
    expect(spec.code).toBe(2);
    expect(spec.stderr).toContain('unknown spec "nope"');
    const missing = cli(author, ['./no-such-adapter.js']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such module');
    const help = cli(author, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: sessionkit-conformance');
  });

  it('says how to install vitest when the peer is missing', () => {
    const bare = project(join(work, 'no-vitest'));
    // --legacy-peer-deps: npm leaves peers out, as an author on an old npm would.
    npmInstall(bare, ['-D', '--legacy-peer-deps', ...tarballs]);
    const { code, stderr } = cli(bare, ['./map-store.js']);
    expect(code).toBe(2);
    expect(stderr).toContain('vitest is not installed');
    expect(stderr).toContain('npm install -D vitest');
  });

  it('publishes types that compile in a strict consumer without @types/node', () => {
    writeFileSync(
      join(author, 'consumer.ts'),
      [
        "import { type ConformanceInitializer, type ConformanceReport, formatReport, runConformanceSuite } from '@sessionkit/conformance';",
        "import { isSessionKitError, type Store } from '@sessionkit/core';",
        "export const initializer = (create: () => Store): ConformanceInitializer => ({ name: 'typed', create });",
        'export async function report(init: ConformanceInitializer): Promise<string> {',
        "  const r: ConformanceReport = await runConformanceSuite(init, { specs: ['store'] });",
        '  return formatReport(r);',
        '}',
        "export const isConflict = (e: unknown): boolean => isSessionKitError(e, 'conflict');",
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(author, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        files: ['consumer.ts'],
      }),
    );
    // The workspace's compiler; the project has no @types/node for it to find.
    const tsc = join(repoRoot, 'node_modules', '.bin', 'tsc');
    const { out } = sh(tsc, ['-p', 'tsconfig.json'], author, 120_000);
    const errorFiles = [...out.matchAll(/^(\S+?)\(\d+,\d+\): error/gm)].map((m) => m[1]!);
    expect([...new Set(errorFiles)].sort(), out).toEqual([...KNOWN_NODE_TYPE_LEAKS].sort());
  });
});
