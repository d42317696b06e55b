// Bad URLs, missing adapters, unreachable servers, bad usage: one line on stderr, the
// documented exit code, and never a credential.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { isolatedInstall } from './helpers/isolated-install.js';
import { lines, runCli } from './helpers/run-cli.js';

const SECRET = 's3cr3t-Pa55';
const install = isolatedInstall();
afterAll(() => rmSync(install.root, { recursive: true, force: true }));

/** One line on stderr, nothing on stdout, no secret anywhere. */
function expectOneLine(r: { stdout: string; stderr: string }) {
  expect(lines(r.stderr), r.stderr).toHaveLength(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toContain(SECRET);
}

describe('errors', () => {
  it('a malformed store URL is a usage error (2)', async () => {
    for (const url of ['sessions', 'postgres://[bad', `foo://u:${SECRET}@h/x`]) {
      const r = await runCli(['--store', url, 'list']);
      expect(r.code, url).toBe(2);
      expectOneLine(r);
      expect(r.stderr).toMatch(/^sessionkit list: /);
    }
  });

  it('an unknown URL parameter is a usage error naming it (2)', async () => {
    const r = await runCli(['--store', `postgres://bob:${SECRET}@127.0.0.1:1/db?bogus=1`, 'list']);
    expect(r.code).toBe(2);
    expectOneLine(r);
    expect(r.stderr).toContain('"bogus"');
    expect(r.stderr).toContain('postgres://bob:***@127.0.0.1:1/db');
  });

  it('an unreachable server fails (1) with the store named without credentials', async () => {
    const r = await runCli(['--store', `postgres://bob:${SECRET}@127.0.0.1:1/db`, 'doctor']);
    expect(r.code).toBe(1);
    expectOneLine(r);
    expect(r.stderr).toContain('cannot reach store postgres://bob:***@127.0.0.1:1/db:');
    expect(r.stderr).toContain('check that it is running');
  });

  it('a missing adapter package fails (1) naming what to install', async () => {
    const r = await runCli(['--store', `postgres://bob:${SECRET}@127.0.0.1/db`, 'list'], {
      bin: install.bin,
      cwd: install.root,
    });
    expect(r.code, r.stderr).toBe(1);
    expectOneLine(r);
    expect(r.stderr).toContain('npm install @sessionkit/postgres pg');
    // The same installation opens its own file store.
    const ok = await runCli(['--store', 'memory:', 'list', '--json'], {
      bin: install.bin,
      cwd: install.root,
    });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('a missing conformance suite fails (1) naming what to install', async () => {
    const r = await runCli(['conformance', './adapter.js'], {
      bin: install.bin,
      cwd: install.root,
    });
    expect(r.code).toBe(1);
    expectOneLine(r);
    expect(r.stderr).toContain('npm install -D @sessionkit/conformance vitest');
  });

  it('bad usage exits 2 with one line', { timeout: 240_000 }, async () => {
    for (const args of [
      ['lst'],
      ['list', '--limit', '0'],
      ['list', '--bogus'],
      ['show'],
      ['prune'],
      ['prune', '--max', '-1'],
      ['migrate', '--from', 'memory:'],
      ['migrate', '--from', 'memory:', '--to', 'memory:'],
      ['import', '--on-existing', 'merge'],
      ['list', '--progress', 'sometimes'],
    ]) {
      const r = await runCli(['--store', 'memory:', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expectOneLine(r);
    }
  });

  it('an invalid id is a usage error; --debug adds the stack', async () => {
    const r = await runCli(['--store', 'memory:', 'show', '../etc/passwd']);
    expect(r.code).toBe(2);
    expectOneLine(r);
    const debug = await runCli(['--store', 'memory:', '--debug', 'show', '../etc/passwd']);
    expect(debug.code).toBe(2);
    expect(lines(debug.stderr).length).toBeGreaterThan(2);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  it('every command has --help with examples', { timeout: 240_000 }, async () => {
    const root = await runCli(['--help']);
    expect(root.code).toBe(0);
    expect(root.stdout).toContain('Exit codes:');
    const commands = [
      'list',
      'search',
      'show',
      'tree',
      'export',
      'import',
      'migrate',
      'repair',
      'prune',
      'stash',
      'doctor',
      'conformance',
    ];
    for (const command of commands) {
      const r = await runCli([command, '--help']);
      expect(r.code, command).toBe(0);
      expect(r.stdout, command).toContain('Examples:');
      expect(r.stdout, command).toContain(`$ sessionkit ${command}`);
    }
  });
});
