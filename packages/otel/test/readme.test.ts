// The README's example runs as written and prints what its comments say, and its tables
// name every span, span attribute and metric the package emits.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { METRIC_NAMES, SPAN_ATTRIBUTES, STORE_METHODS } from '../src/index.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The code of the first ```ts block after `heading`. */
function codeAfter(heading: string): string {
  const at = readme.indexOf(heading);
  expect(at, heading).toBeGreaterThan(-1);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  expect(block, `a ts block after ${heading}`).not.toBeNull();
  return block![1]!;
}

/** Runs ES module `code` with Node from the package folder (its dependencies resolve there). */
function runModule(code: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', code],
      { cwd: packageDir, timeout: 60_000, encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

describe('README', () => {
  it('the smallest working example prints what its closing comments say', async () => {
    const code = codeAfter('## The smallest working example');
    const lines = code.trimEnd().split('\n');
    const expected: string[] = [];
    while (lines.length > 0 && lines[lines.length - 1]!.startsWith('// ')) {
      expected.unshift(lines.pop()!.slice(3));
    }
    expect(expected.length).toBeGreaterThan(2);
    const run = await runModule(code);
    expect(run.code, run.err).toBe(0);
    expect(run.out.trimEnd().split('\n')).toEqual(expected);
  });

  it('names every span, span attribute and metric', () => {
    const named = (name: string) => readme.includes(`\`${name}\``);
    const spans = STORE_METHODS.map((m) => `sessionkit.${m}`);
    expect(spans.filter((n) => !named(n))).toEqual([]);
    expect(Object.values(SPAN_ATTRIBUTES).filter((n) => !named(n))).toEqual([]);
    expect(Object.values(METRIC_NAMES).filter((n) => !named(n))).toEqual([]);
  });
});
