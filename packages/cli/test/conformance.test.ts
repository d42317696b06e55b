// `sessionkit conformance <module>` runs the suite's own CLI and passes its exit code on.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/run-cli.js';

const initializer = fileURLToPath(new URL('./fixtures/memory-initializer.mjs', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sk-cli-conformance-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('sessionkit conformance', () => {
  it('runs the suite on a module and writes its report', async () => {
    const report = join(work, 'report.json');
    const r = await runCli(['conformance', initializer, '--spec', 'store', '--report', report], {
      timeoutMs: 240_000,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('sessionkit conformance report: memory-from-cli');
    const parsed = JSON.parse(readFileSync(report, 'utf8'));
    expect(parsed.capabilities.Store.status).toBe('passed');
    expect(parsed.capabilities.Store.failed).toBe(0);
  });

  it("passes the suite's usage errors on (exit 2)", async () => {
    const r = await runCli(['conformance', initializer, '--spec', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown spec "nope"');
    const missing = await runCli(['conformance', join(work, 'absent.js')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such module');
  });
});
