// Real OS processes: a writer SIGKILLed at random moments, and two writers racing.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message } from '@sessionkit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFrames } from '../src/format/frame.js';
import { FileStore } from '../src/index.js';
import { runNode, tempDir } from './helpers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const dist = join(here, '..', 'dist', 'index.js');
const fixture = (name: string) => join(here, 'fixtures', name);

beforeAll(() => {
  if (!existsSync(dist)) {
    throw new Error(
      'these tests run the built package: run `pnpm --filter @sessionkit/file build` first',
    );
  }
});

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function freshDir(): string {
  const root = tempDir('sk-file-proc-');
  roots.push(root);
  return join(root, 'store');
}

/** Starts the crash child; resolves with the acknowledged turns once it has been SIGKILLed. */
function runAndKill(
  dir: string,
  id: string,
  first: number,
  delayMs: number,
  sync = 'true',
): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      process.execPath,
      [fixture('crash-child.mjs'), dir, id, String(first), '3', sync],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      // Kill a random while after the first acknowledged commit (the process is warm).
      if (!timer) timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL')
        return reject(new Error(`crash child ended without a kill: ${err}`));
      const acks = out
        .split('\n')
        .filter((l) => l.startsWith('ack '))
        .map((l) => Number(l.slice(4)));
      resolve(acks);
    });
  });
}

function textOf(m: unknown): string {
  return (m as Message).content as string;
}

describe('crash safety', () => {
  it('SIGKILL at random moments: every acknowledged commit survives, nothing torn, repair agrees with a clean rebuild', async () => {
    const dir = freshDir();
    const setup = new FileStore({ dir });
    await setup.create({ id: 'victim', folder: 'crash' });
    await setup.create({ id: 'bystander', folder: 'crash', title: 'untouched' });
    await setup.close();
    let acknowledged = 0; // turns known durable
    for (let round = 0; round < 50; round++) {
      const acks = await runAndKill(dir, 'victim', acknowledged, Math.floor(Math.random() * 40));
      // Every ack line is the next turn in order.
      expect(acks).toEqual(acks.map((_, i) => acknowledged + i));
      const store = new FileStore({ dir, lockStaleMs: 1000 });
      const messages = await store.loadMessages('victim');
      const turns = messages.length / 2;
      expect(Number.isInteger(turns)).toBe(true);
      // Acknowledged turns are all there; at most the one in flight at the kill is extra.
      expect(turns).toBeGreaterThanOrEqual(acknowledged + acks.length);
      expect(turns).toBeLessThanOrEqual(acknowledged + acks.length + 1);
      messages.forEach((m, i) => {
        expect(textOf(m).startsWith(`${i % 2 ? 'a' : 'q'}${Math.floor(i / 2)} `)).toBe(true);
      });
      const loaded = await store.load('victim');
      expect(loaded.messages).toEqual(messages);
      expect(loaded.turnCount).toBe(turns);
      const events = await store.events('victim');
      expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
      // The listing agrees with the data, even before any repair.
      const listed = await store.list({ folder: 'crash' });
      expect(listed.map((s) => s.id).sort()).toEqual(['bystander', 'victim']);
      const summary = listed.find((s) => s.id === 'victim')!;
      const { messages: _m, ...rest } = loaded;
      expect(summary).toEqual({ ...rest, messageCount: messages.length });
      // repair() gives exactly the index a rebuild from nothing gives.
      const report = await store.repair();
      expect(report.skippedCorrupt).toEqual([]);
      const repaired = await store.list({ includeArchived: true });
      await store.close();
      rmSync(join(dir, 'index.log'));
      const rebuilt = new FileStore({ dir, lockStaleMs: 1000 });
      expect(await rebuilt.list({ includeArchived: true })).toEqual(repaired);
      await rebuilt.close();
      acknowledged = turns;
    }
    // repair() gives exactly the index a rebuild from nothing gives.
    const store = new FileStore({ dir });
    const report = await store.repair();
    expect(report.skippedCorrupt).toEqual([]);
    expect(report.rebuilt).toBe(2);
    const afterRepair = await store.list({ includeArchived: true });
    await store.close();
    rmSync(join(dir, 'index.log'));
    const clean = new FileStore({ dir });
    await clean.repair();
    expect(await clean.list({ includeArchived: true })).toEqual(afterRepair);
    expect((await clean.loadMessages('victim')).length).toBe(acknowledged * 2);
    await clean.close();
  }, 120_000);
});

describe("crash safety with sync: 'group'", () => {
  it('SIGKILL at random moments: every acknowledged group commit survives', async () => {
    const dir = freshDir();
    const setup = new FileStore({ dir });
    await setup.create({ id: 'victim', folder: 'crash' });
    await setup.close();
    let acknowledged = 0;
    for (let round = 0; round < 12; round++) {
      const delay = Math.floor(Math.random() * 40);
      const acks = await runAndKill(dir, 'victim', acknowledged, delay, 'group');
      expect(acks).toEqual(acks.map((_, i) => acknowledged + i));
      // Opening replays the killed writer's journal (its logs are intact: a process crash).
      const store = new FileStore({ dir, lockStaleMs: 1000 });
      const messages = await store.loadMessages('victim');
      const turns = messages.length / 2;
      expect(turns).toBeGreaterThanOrEqual(acknowledged + acks.length);
      expect(turns).toBeLessThanOrEqual(acknowledged + acks.length + 1);
      messages.forEach((m, i) => {
        expect(textOf(m).startsWith(`${i % 2 ? 'a' : 'q'}${Math.floor(i / 2)} `)).toBe(true);
      });
      const loaded = await store.load('victim');
      const [summary] = await store.list({ folder: 'crash' });
      const { messages: _m, ...rest } = loaded;
      expect(summary).toEqual({ ...rest, messageCount: messages.length });
      await store.close();
      acknowledged = turns;
    }
  }, 120_000);
});

describe('two processes on one session', () => {
  it('with expectations exactly one wins each round; without, nothing is lost', async () => {
    const dir = freshDir();
    const store = new FileStore({ dir });
    await store.create({ id: 'duel' });
    await store.create({ id: 'crowd' });
    const rounds = 40;
    writeFileSync(join(dir, '..', 'go'), '');
    const [a, b] = await Promise.all([
      runNode(fixture('race-child.mjs'), [dir, 'duel', 'A', 'expect', String(rounds)]),
      runNode(fixture('race-child.mjs'), [dir, 'duel', 'B', 'expect', String(rounds)]),
    ]);
    const outA = JSON.parse(a) as string[];
    const outB = JSON.parse(b) as string[];
    const duel = (await store.loadMessages('duel')) as unknown as string[];
    expect(duel).toHaveLength(rounds);
    for (let r = 0; r < rounds; r++) {
      // Exactly one of the two won round r, and message r is the winner's.
      expect([outA[r], outB[r]].sort()).toEqual(['conflict', 'ok']);
      expect(duel[r]).toBe(`${outA[r] === 'ok' ? 'A' : 'B'}:${r}`);
    }
    const count = 60;
    await Promise.all([
      runNode(fixture('race-child.mjs'), [dir, 'crowd', 'A', 'free', String(count)]),
      runNode(fixture('race-child.mjs'), [dir, 'crowd', 'B', 'free', String(count)]),
    ]);
    const crowd = (await store.loadMessages('crowd')) as unknown as string[];
    expect(crowd).toHaveLength(2 * count);
    for (const who of ['A', 'B']) {
      const mine = crowd.filter((m) => m.startsWith(`${who}:`)).map((m) => Number(m.slice(2)));
      expect(mine).toEqual(Array.from({ length: count }, (_, i) => i));
    }
    const loaded = await store.load('crowd');
    expect(loaded.revision).toBe(1 + 2 * count);
    await store.close();
  }, 120_000);
});

describe('index compaction under concurrent writers', () => {
  it('two processes and two in-process stores writing while the index is compacted lose no entry', async () => {
    const dir = freshDir();
    const opts = { indexSlackBytes: 2_000 }; // compact every few dozen writes
    const store = new FileStore<string>({ dir, ...opts });
    const peer = new FileStore<string>({ dir, ...opts });
    const ids = Array.from({ length: 12 }, (_, i) => `c${i}`);
    for (const id of ids) await store.create({ id, folder: 'compact' });
    writeFileSync(join(dir, '..', 'go'), '');
    const n = 120;
    await Promise.all([
      runNode(fixture('race-child.mjs'), [
        dir,
        ids.join(','),
        'P',
        'many',
        String(n),
        JSON.stringify(opts),
      ]),
      runNode(fixture('race-child.mjs'), [
        dir,
        ids.join(','),
        'Q',
        'many',
        String(n),
        JSON.stringify(opts),
      ]),
      (async () => {
        for (let i = 0; i < n; i++) {
          const s = i % 2 ? store : peer;
          await s.commit(ids[(i * 5) % ids.length]!, { append: [`local:${i}`] });
        }
      })(),
    ]);
    const listed = await store.list({ folder: 'compact', limit: 100 });
    expect(listed).toHaveLength(ids.length);
    let total = 0;
    for (const summary of listed) {
      const full = await store.load(summary.id);
      const { messages, ...rest } = full;
      // The index entry is exactly the session's current state: nothing lost or stale.
      expect(summary).toEqual({ ...rest, messageCount: messages.length });
      total += messages.length;
    }
    expect(total).toBe(3 * n);
    // The index was really compacted meanwhile (it would hold 3n + 12 records otherwise).
    const records = parseFrames(readFileSync(join(dir, 'index.log'))).frames.length;
    expect(records).toBeLessThan(3 * n);
    const fresh = new FileStore({ dir });
    expect(await fresh.list({ folder: 'compact', limit: 100 })).toEqual(listed);
    expect((await fresh.repair()).indexEntriesFixed).toBe(0);
    await Promise.all([store.close(), peer.close(), fresh.close()]);
  }, 120_000);
});
