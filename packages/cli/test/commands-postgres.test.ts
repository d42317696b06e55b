// Every store command against PostgreSQL (a fresh schema per test), through the binary.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message, Store } from '@sessionkit/core';
import { openPostgresStore } from '@sessionkit/postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  dropSchema,
  freshSchema,
  POSTGRES_URL,
  postgresAvailable,
  storeUrl,
} from './helpers/postgres.js';
import { lines, runCli } from './helpers/run-cli.js';
import { type Seeded, seedMany, seedStore } from './helpers/seed.js';

const available = postgresAvailable('the PostgreSQL command tests need it');
const work = mkdtempSync(join(tmpdir(), 'sk-cli-pg-'));
const schemas: string[] = [];

afterEach(async () => {
  for (const s of schemas.splice(0)) await dropSchema(s);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A fresh schema, seeded by `fill`, and its store URL. */
async function seeded<T>(fill: (store: Store) => Promise<T>) {
  const schema = freshSchema();
  schemas.push(schema);
  const store = await openPostgresStore<Message>(POSTGRES_URL, { schema });
  try {
    return { url: storeUrl(schema), value: await fill(store) };
  } finally {
    await store.close();
  }
}

describe.runIf(available)('sessionkit on PostgreSQL', () => {
  it('list, search, show and tree', async () => {
    const { url, value: ids } = await seeded<Seeded>(seedStore);
    const sk = (args: string[]) => runCli(['--store', url, ...args]);
    const list = JSON.parse((await sk(['list', '--archived', '--json'])).stdout);
    expect(list.sessions).toHaveLength(5);
    const page = JSON.parse((await sk(['list', '--archived', '--limit', '3', '--json'])).stdout);
    const rest = JSON.parse(
      (await sk(['list', '--archived', '--limit', '3', '--cursor', page.nextCursor, '--json']))
        .stdout,
    );
    expect([...page.sessions, ...rest.sessions].map((s: { id: string }) => s.id)).toEqual(
      list.sessions.map((s: { id: string }) => s.id),
    );
    const hit = JSON.parse((await sk(['search', 'LEXER SKIPS', '--json'])).stdout);
    expect(hit.sessions.map((s: { id: string }) => s.id)).toEqual([ids.root]);
    const show = await sk(['show', ids.root]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`⎇ branch ${ids.branch}`);
    expect(show.stdout).toContain('ünïcødé ✓');
    const tree = await sk(['tree', ids.branch]);
    expect(lines(tree.stdout)[1]).toContain(`└─ ${ids.branch}`);
  });

  it('export, import into another schema, verify equal', async () => {
    const { url } = await seeded(seedStore);
    const { url: target } = await seeded(async () => undefined);
    const file = join(work, 'pg.jsonl');
    const exported = await runCli(['--store', url, 'export', file]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(lines(readFileSync(file, 'utf8'))).toHaveLength(6);
    const imported = await runCli(['--store', target, 'import', file]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('imported 5 sessions');
    const verify = await runCli(['migrate', '--from', url, '--to', target, '--verify-only']);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('repair, prune and doctor', async () => {
    const { url } = await seeded((store) => seedMany(store, 30));
    const sk = (args: string[]) => runCli(['--store', url, ...args]);
    const repair = await sk(['repair']);
    expect(repair.code, repair.stderr).toBe(0);
    expect(repair.stdout).toContain('0 unreadable');
    const dry = await sk(['prune', '--max', '10', '--dry-run']);
    expect(dry.stdout).toContain('would delete 20 root sessions');
    const prune = await sk(['prune', '--max', '10']);
    expect(prune.stdout).toContain('deleted 20 root sessions');
    const doctor = JSON.parse((await sk(['doctor', '--json'])).stdout);
    expect(doctor.adapter).toMatch(/^@sessionkit\/postgres/);
    expect(doctor.format).toMatch(/^schema "sk_cli_\w+" at version \d+/);
    expect(doctor.counts).toMatchObject({ sessions: 10, roots: 10, messages: 20 });
    expect(doctor.store).not.toMatch(/:[^@/]*@/);
  });
});
