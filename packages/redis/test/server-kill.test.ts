// A private Redis server (AOF `appendfsync always`, its own port and folder), and a master
// of a private three-master Cluster, SIGKILLed and restarted at random moments while two
// writer processes — one on an owned client (openRedisStore), one on a borrowed client
// with ioredis's defaults (which re-sends commands after a reconnect) — commit, branch,
// merge, delete and append events. Every
// call must settle; every error must be `unavailable` and retryable; every acknowledged
// write must be there exactly once and an unacknowledged one at most once; counters are
// never doubled; every listed summary equals its session.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSessionKitError, type Message } from '@sessionkit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedisStore, type RedisStore } from '../src/index.js';
import {
  freePort,
  type ServerProcess,
  startCluster,
  startServer,
  stopServer,
  type TestCluster,
  waitForClusterOk,
} from './cluster.js';
import { clusterAvailable } from './cluster-env.js';
import { listEverything } from './harness.js';
import { buildWriterEntry, startWriter, type Writer } from './writers.js';

const available = clusterAvailable('the server kill test did not run');
const AOF = ['--appendonly', 'yes', '--appendfsync', 'always'];
/** Kills per run: bounded, so each test takes well under a minute. */
const STANDALONE_ROUNDS = 12;
const CLUSTER_ROUNDS = 6;

let dir = '';
let port = 0;
let server: ServerProcess | undefined;
let cluster: TestCluster | undefined;
let entry = '';

beforeAll(async () => {
  if (!available) return;
  entry = buildWriterEntry('sessionkit-redis-server-kill-test');
  dir = mkdtempSync(join(tmpdir(), 'sk-redis-server-kill-'));
  port = await freePort();
  server = await startServer(port, dir, AOF);
  cluster = await startCluster(3, AOF);
}, 120_000);

afterAll(async () => {
  try {
    if (server) await stopServer(server);
    if (dir) rmSync(dir, { recursive: true, force: true });
  } finally {
    await cluster?.stop();
  }
});

/** Where the writers write and what the test kills. */
interface KillTarget {
  /** The writers' connection arguments (`fixtures/writer.mjs`), by writer name. */
  writers: Record<string, string>;
  /** A URL for openRedisStore. */
  url: string;
  /** SIGKILLs one server; resolves with a function that restarts it. */
  kill(): Promise<() => Promise<void>>;
  /** Waits until the whole backend serves again. */
  settled(): Promise<void>;
}

/** One call as a writer printed it. */
interface Outcome {
  op: 'commit' | 'create' | 'event' | 'branch' | 'merge' | 'delete';
  id: string;
  detail: string;
  ok: boolean;
  result?: unknown;
  code?: string;
  retryable?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo));

function outcomesOf(writer: Writer): Outcome[] {
  return writer
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{"op"'))
    .map((line) => JSON.parse(line) as Outcome);
}

/** The contents of the messages of a session, or undefined when it does not exist. */
async function contentsOf(store: RedisStore, id: string): Promise<string[] | undefined> {
  try {
    return (await store.loadMessages(id)).map((m) => (m as Message).content as string);
  } catch (e) {
    if (isSessionKitError(e, 'not_found')) return undefined;
    throw e;
  }
}

/**
 * Each acknowledged write in `outcomes` is in `present` exactly once, each failed one at
 * most once, and nothing else of theirs is there. Returns the messages that are present.
 */
function expectOnce(outcomes: Outcome[], present: string[], what: string): void {
  const count = new Map<string, number>();
  for (const m of present) count.set(m, (count.get(m) ?? 0) + 1);
  for (const o of outcomes) {
    const n = count.get(o.detail) ?? 0;
    if (o.ok) expect(n, `${what}: acknowledged ${o.detail}`).toBe(1);
    else expect(n, `${what}: failed ${o.detail}`).toBeLessThanOrEqual(1);
    count.delete(o.detail);
  }
  expect([...count.keys()], `${what}: written by no call`).toEqual([]);
}

describe.skipIf(!available)('redis › the server killed and restarted under writers', () => {
  it(`standalone, ${STANDALONE_ROUNDS} SIGKILLs: every call settles, errors are unavailable, acknowledged writes are there once`, async () => {
    const url = `redis://127.0.0.1:${port}`;
    await killRounds(STANDALONE_ROUNDS, {
      writers: { o: `owned:${url}`, b: `borrowed:${url}` },
      url,
      async kill() {
        await stopServer(server as ServerProcess);
        return async () => {
          server = await startServer(port, dir, AOF);
        };
      },
      settled: async () => {},
    });
  }, 180_000);

  it(`Cluster, ${CLUSTER_ROUNDS} SIGKILLs of a master: the same`, async () => {
    const c = cluster as TestCluster;
    const url = `redis://127.0.0.1:${c.ports[0]}/?cluster=true`;
    await killRounds(CLUSTER_ROUNDS, {
      writers: { o: `owned:${url}`, b: `cluster:${c.ports.join(',')}` },
      url,
      async kill() {
        const i = between(0, c.ports.length);
        await stopServer(c.servers[i] as ServerProcess);
        return async () => {
          c.servers[i] = await startServer(c.ports[i] as number, c.dir, c.argsOf(i));
        };
      },
      settled: () => waitForClusterOk(c.ports),
    });
  }, 180_000);
});

/**
 * Runs the writers on `target` while `rounds` kills and restarts happen at random moments,
 * then checks every call's outcome against what the store holds.
 */
async function killRounds(rounds: number, target: KillTarget): Promise<void> {
  const prefix = 'serverkill:';
  const check = await openRedisStore(target.url, { prefix });
  const writers: Writer[] = [];
  try {
    await check.create({ id: 'shared', folder: 'faults' });
    for (const [name, connection] of Object.entries(target.writers)) {
      writers.push(startWriter([connection, prefix, entry, 'faults', name]));
    }
    for (const w of writers) await w.waitFor(/"ok":true/);
    for (let round = 0; round < rounds; round++) {
      await sleep(between(150, 900));
      const restart = await target.kill();
      await sleep(between(0, 400));
      await restart();
    }
    await target.settled();
    await sleep(1_000);
    for (const w of writers) w.child.stdin?.write('stop\n');
    for (const w of writers) await w.waitFor(/"done":true/);
    const outcomes = writers.flatMap(outcomesOf);
    const errors = expectSettled(writers, outcomes);
    await expectShared(check, outcomes);
    await expectSessions(check, outcomes);
    // Listing tells the truth about every session.
    for (const summary of await listEverything(check)) {
      const { messages, ...rest } = await check.load(summary.id);
      expect(summary).toEqual({ ...rest, messageCount: messages.length });
    }
    const acknowledged = outcomes.filter((o) => o.ok).length;
    console.log(
      `[server kill] ${target.url}: ${rounds} rounds, ${outcomes.length} calls, ${acknowledged} acknowledged, errors ${JSON.stringify(errors)}`,
    );
    expect(acknowledged).toBeGreaterThan(rounds);
  } finally {
    for (const w of writers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await check.close();
  }
}

/** Every call settled and failed only as unavailable (retryable); returns the errors by call and code. */
function expectSettled(writers: Writer[], outcomes: Outcome[]): Record<string, number> {
  for (const w of writers) {
    const line = w
      .output()
      .split('\n')
      .find((l) => l.startsWith('{"done"'));
    expect((JSON.parse(line ?? '{}') as { pending?: number }).pending, 'calls left unsettled').toBe(
      0,
    );
  }
  const errors = outcomes.filter((o) => !o.ok);
  expect(
    errors.filter((e) => e.code !== 'unavailable' || !e.retryable),
    'errors other than unavailable/retryable',
  ).toEqual([]);
  const byCode: Record<string, number> = {};
  for (const e of errors) byCode[`${e.op} ${e.code}`] = (byCode[`${e.op} ${e.code}`] ?? 0) + 1;
  return byCode;
}

/** The session every loop commits to: each acknowledged commit once, counters not doubled. */
async function expectShared(check: RedisStore, outcomes: Outcome[]): Promise<void> {
  const shared = await check.load('shared');
  const texts = shared.messages.map((m) => (m as Message).content as string);
  expectOnce(
    outcomes.filter((o) => o.id === 'shared'),
    texts,
    'shared',
  );
  expect(shared.turnCount).toBe(texts.length);
}

/** Each session's own writes, in the order its loop made them. */
async function expectSessions(check: RedisStore, outcomes: Outcome[]): Promise<void> {
  const byId = new Map<string, Outcome[]>();
  for (const o of outcomes) if (o.id !== 'shared') byId.set(o.id, [...(byId.get(o.id) ?? []), o]);
  const parentOf = new Map(
    outcomes.filter((o) => o.op === 'branch' && o.ok).map((o) => [o.result as string, o.id]),
  );
  const commitsOf = (id: string) =>
    (byId.get(id) ?? []).filter((o) => o.op === 'commit').map((o) => o.detail);
  const deleted = new Set(outcomes.filter((o) => o.op === 'delete' && o.ok).map((o) => o.id));
  const mayBeGone = new Set(outcomes.filter((o) => o.op === 'delete').map((o) => o.id));
  for (const [id, ops] of byId) {
    const texts = await contentsOf(check, id);
    if (deleted.has(id)) {
      expect(texts, `${id} was deleted`).toBeUndefined();
    } else if (texts === undefined) {
      // Never created (its create failed), or a delete that failed had landed.
      const created = ops.find((o) => o.op === 'create');
      expect(created?.ok !== true || mayBeGone.has(id), `${id} is missing`).toBe(true);
    } else {
      const parent = parentOf.get(id);
      await expectSession(check, id, ops, texts, parent === undefined ? [] : commitsOf(parent));
    }
  }
}

/** One existing session: `inherited` are the texts of its parent's commits when it is a branch. */
async function expectSession(
  check: RedisStore,
  id: string,
  ops: Outcome[],
  texts: string[],
  inherited: string[],
): Promise<void> {
  // A branch starts with its parent's three commits (all acknowledged before it).
  expect(texts.slice(0, inherited.length)).toEqual(inherited);
  const own = texts.slice(inherited.length);
  const commits = ops.filter((o) => o.op === 'commit');
  const merge = ops.find((o) => o.op === 'merge');
  if (merge?.ok || (merge && own.includes(`${id}:b`))) {
    // Merged (a failed merge may have landed): the parent holds its own commits and then
    // its branch's.
    expect(own).toEqual([...commits.map((o) => o.detail), `${id}:b`]);
  } else {
    expectOnce(commits, own, id);
  }
  const events = (await check.events(id)).map((e) => (e.payload as { e: string }).e);
  expectOnce(
    ops.filter((o) => o.op === 'event'),
    events,
    `${id} events`,
  );
  // Counters are never doubled: one turn per commit that landed (a branch's own commit
  // adds none; it starts with its parent's turns).
  const counted = inherited.length > 0 ? inherited : commits.map((o) => o.detail);
  expect((await check.load(id)).turnCount, `${id} turnCount`).toBe(
    counted.filter((d) => texts.includes(d)).length,
  );
}
