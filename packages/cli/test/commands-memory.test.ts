// Commands against memory: (a fresh, empty store in each process). Cross-invocation state
// needs file or PostgreSQL; here each command must work on memory within one run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@sessionkit/file';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lines, runCli } from './helpers/run-cli.js';
import { seedStore } from './helpers/seed.js';

const work = mkdtempSync(join(tmpdir(), 'sk-cli-memory-'));
const fileUrl = `file:${join(work, 'store')}`;
let exportText = '';

beforeAll(async () => {
  const store = new FileStore({ dir: join(work, 'store'), sync: false });
  await seedStore(store);
  await store.close();
  exportText = (await runCli(['--store', fileUrl, 'export', '-'])).stdout;
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const mem = (args: string[], input?: string) => runCli(['--store', 'memory:', ...args], { input });

describe('sessionkit on a memory store', () => {
  it('list, search and export see an empty store', async () => {
    const list = await mem(['list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ sessions: [], nextCursor: null });
    expect((await mem(['search', 'x'])).stdout).toContain('(no sessions match)');
    const exported = await mem(['export']);
    expect(lines(exported.stdout)).toHaveLength(1);
    expect(JSON.parse(exported.stdout).format).toBe('sessionkit-export');
  });

  it('show and tree of a missing session fail with one line and exit 1', async () => {
    for (const command of ['show', 'tree']) {
      const r = await mem([command, 'nope']);
      expect(r.code).toBe(1);
      expect(lines(r.stderr)).toHaveLength(1);
      expect(r.stderr).toMatch(
        new RegExp(`^sessionkit ${command}: .*not found.*\\(store memory:\\)`),
      );
    }
  });

  it('import from stdin creates the sessions', async () => {
    const r = await mem(['import', '-'], exportText);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('imported 5 sessions into memory:');
  });

  it('migrate from file into memory copies and verifies in one run', async () => {
    const r = await runCli(['migrate', '--from', fileUrl, '--to', 'memory:']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('copied 5 sessions');
    expect(r.stdout).toContain('verified: the target equals the source');
  });

  it('repair, prune and doctor run', async () => {
    const repair = await mem(['repair']);
    expect(repair.code, repair.stderr).toBe(0);
    expect(repair.stdout).toMatch(/repaired memory:|nothing to repair/);
    const prune = await mem(['prune', '--max', '1']);
    expect(prune.stdout).toContain('deleted 0 root sessions');
    const doctor = await mem(['doctor', '--json']);
    const report = JSON.parse(doctor.stdout);
    expect(report.adapter).toMatch(/^@sessionkit\/memory/);
    expect(report.counts.sessions).toBe(0);
    expect(report.capabilities).toEqual(expect.arrayContaining(['Brancher', 'EventLog', 'Pruner']));
  });
});
