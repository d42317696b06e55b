// migrate file → PostgreSQL → file of a store with branches, events and runtime status,
// interrupted once by Ctrl-C (SIGINT) and resumed, then checked equal.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@sessionkit/file';
import { openPostgresStore } from '@sessionkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, postgresAvailable, storeUrl } from './helpers/postgres.js';
import { runCli, startCli } from './helpers/run-cli.js';
import { seedMany, seedStore } from './helpers/seed.js';
import { snapshot } from './helpers/snapshot.js';

const available = postgresAvailable('the migrate tests need it');
const work = mkdtempSync(join(tmpdir(), 'sk-cli-migrate-'));
const dirA = join(work, 'a');
const dirC = join(work, 'c');
const schema = freshSchema();
const pgUrl = storeUrl(schema);
const MANY = 400;

afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  if (available) await dropSchema(schema);
});

async function fileSnapshot(dir: string) {
  const store = new FileStore({ dir, sync: false });
  try {
    return await snapshot(store);
  } finally {
    await store.close();
  }
}

async function postgresSnapshot() {
  const store = await openPostgresStore(pgUrl.replace(/\?.*$/, ''), { schema });
  try {
    return await snapshot(store);
  } finally {
    await store.close();
  }
}

/** Waits until the child's progress lines show at least `n` sessions copied. */
async function copiedAtLeast(
  out: { stderr: string },
  n: number,
  timeoutMs = 30_000,
): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const all = [...out.stderr.matchAll(/migrate: copy (\d+)\/(\d+)/g)];
    const last = all[all.length - 1];
    if (last && Number(last[1]) >= n) return Number(last[1]);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no progress past ${n}: ${out.stderr}`);
}

describe.runIf(available)('migrate file → postgres → file', () => {
  let source: Map<string, unknown>;

  beforeAll(async () => {
    const store = new FileStore({ dir: dirA, sync: false });
    await seedStore(store);
    await seedMany(store, MANY);
    await store.close();
    source = await fileSnapshot(dirA);
    expect(source.size).toBe(MANY + 5);
  });

  it('stops at a safe point on SIGINT and a second run finishes without duplicates', async () => {
    const run = startCli(
      [
        'migrate',
        '--from',
        `file:${dirA}`,
        '--to',
        pgUrl,
        '--progress',
        'lines',
        '--progress-interval',
        '20',
        '--page-size',
        '50',
      ],
      { timeoutMs: 120_000 },
    );
    await copiedAtLeast(run.out, 20);
    run.child.kill('SIGINT');
    const first = await run.done;
    expect(first.code, first.stderr).toBe(130);
    expect(first.stderr).toMatch(
      /sessionkit migrate: interrupted after \d+ of \d+ sessions; the target is consistent — run the same command again to resume/,
    );
    expect(first.stdout).toBe('');
    const partial = await postgresSnapshot();
    expect(partial.size).toBeGreaterThan(0);
    expect(partial.size).toBeLessThan(source.size);
    // Every session the interrupted run created is complete (status and events included).
    for (const [id, value] of partial) expect(value, id).toEqual(source.get(id));

    const second = await runCli(['migrate', '--from', `file:${dirA}`, '--to', pgUrl], {
      timeoutMs: 120_000,
    });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`copied ${source.size - partial.size} sessions`);
    expect(second.stdout).toContain(`${partial.size} already there from an earlier run`);
    expect(second.stdout).toContain('verified: the target equals the source');
    const copied = await postgresSnapshot();
    expect(copied.size).toBe(source.size);
    expect(copied).toEqual(source);
  });

  it('copies back from postgres into a new file store, equal to the original', async () => {
    const back = await runCli(['migrate', '--from', pgUrl, '--to', `file:${dirC}`, '--json'], {
      timeoutMs: 120_000,
    });
    expect(back.code, back.stderr).toBe(0);
    const result = JSON.parse(back.stdout);
    expect(result.copy.copied).toBe(source.size);
    expect(result.verify.ok).toBe(true);
    expect(result.verify.sourceDigest).toBe(result.verify.targetDigest);
    expect(await fileSnapshot(dirC)).toEqual(source);
    const check = await runCli([
      'migrate',
      '--from',
      `file:${dirA}`,
      '--to',
      `file:${dirC}`,
      '--verify-only',
    ]);
    expect(check.code, check.stdout + check.stderr).toBe(0);
  });

  it('exits 3 when the target differs from the source', async () => {
    const store = new FileStore({ dir: dirC, sync: false });
    await store.commit('root-1', { append: [{ role: 'user', content: 'written after the copy' }] });
    await store.delete('s-00007');
    await store.close();
    const r = await runCli([
      'migrate',
      '--from',
      `file:${dirA}`,
      '--to',
      `file:${dirC}`,
      '--verify-only',
    ]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('differs: root-1: message count 4 in the source, 5 in the target');
    expect(r.stdout).toContain('differs: s-00007: missing in the target');
    const last = r.stderr.trim().split('\n').pop();
    expect(last).toMatch(/^sessionkit migrate: verification failed: 2 sessions differ/);
  });
});
