// Failover of a Redis Cluster with replicas (three masters, one replica each, a small
// cluster-node-timeout) while three clients commit: (a) a manual `CLUSTER FAILOVER` on a
// replica, (b) a master SIGKILLed so that its replica is promoted. The stores wait for a
// replica after every write (`waitReplicas: 1`) and retry each failed commit with its
// operation id. Every error must be `unavailable` and retryable, no client may need a
// reconnect, and afterwards every acknowledged turn is there exactly once, in order, and
// every listed summary equals `load`. Counts and times are bounded: each client stops a
// fixed number of turns after the failover (or at MAX_TURNS), each test within 60 s.
// (c) kills a master in the middle of an enforceMax pass: no session is torn, and a pass
// that resolved has deleted its victims for good.
import { isSessionKitError, type Message } from '@sessionkit/core';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KeySpace, openRedisStore, RedisStore } from '../src/index.js';
import {
  cli,
  masterOfKey,
  replicaOf,
  type ServerProcess,
  startCluster,
  startServer,
  stopServer,
  type TestCluster,
  waitForClusterOk,
  waitForMaster,
  waitForReplicas,
} from './cluster.js';
import { clusterAvailable } from './cluster-env.js';
import { listEverything } from './harness.js';
import { expectPrunedWhole, plantRoots, retryUnavailable, rootsOf } from './prune-checks.js';

const available = clusterAvailable('the failover tests did not run');
const CLIENTS = 3;
const SESSIONS_PER_CLIENT = 3;
/** Turns each client commits before the failover starts, and after it is over. */
const TURNS_BEFORE = 15;
const TURNS_AFTER = 20;
/** A client never commits more than this many turns, however long the failover takes. */
const MAX_TURNS = 400;
/** How long a writer keeps retrying one commit before the test fails. */
const RETRY_BUDGET_MS = 40_000;
const WAIT = { waitReplicas: 1, waitReplicasTimeoutMs: 2_000 };

let cluster: TestCluster | undefined;

beforeAll(async () => {
  if (!available) return;
  // A replica may take over however long it was out of touch (validity factor 0); a master
  // silent for 1.5 s is failed, so a SIGKILL is followed by a promotion within seconds.
  cluster = await startCluster(3, ['--cluster-replica-validity-factor', '0'], {
    replicas: 1,
    nodeTimeoutMs: 1_500,
  });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two stores on owned clients (openRedisStore) and one on a borrowed client with ioredis's defaults. */
async function openClients(c: TestCluster, prefix: string): Promise<RedisStore[]> {
  const nodes = c.ports.map((port) => ({ host: '127.0.0.1', port }));
  const stores: RedisStore[] = [];
  for (let i = 0; i < CLIENTS - 1; i++) {
    stores.push(await openRedisStore({ cluster: { nodes } }, { prefix, ...WAIT }));
  }
  const borrowed = new Cluster(nodes);
  borrowed.on('error', () => {});
  stores.push(new RedisStore({ client: borrowed, prefix, ...WAIT }));
  return stores;
}

/** What the writers did: acknowledged turns by session, errors seen, turns done per client. */
interface Log {
  acked: Map<string, string[]>;
  errors: unknown[];
  turns: number[];
  /** Set once the failover is over: each client stops at this many turns. */
  stopAt: number[] | undefined;
  aborted: boolean;
}

/** `run` until it succeeds; only `unavailable` (retryable) may fail it, within the budget. */
async function retrying<T>(log: Log, run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RETRY_BUDGET_MS;
  for (;;) {
    try {
      return await run();
    } catch (e) {
      log.errors.push(e);
      const retryable = isSessionKitError(e, 'unavailable') && e.retryable;
      if (!retryable || Date.now() > deadline || log.aborted) throw e;
      await sleep(50);
    }
  }
}

const idOf = (client: number, session: number) => `c${client}-s${session}`;

/** Client `c` commits turns round-robin to its sessions until told to stop. */
async function writer(store: RedisStore, c: number, log: Log): Promise<void> {
  for (let t = 0; t < MAX_TURNS && !log.aborted; t++) {
    if (log.stopAt !== undefined && t >= (log.stopAt[c] as number)) return;
    const id = idOf(c, t % SESSIONS_PER_CLIENT);
    const content = `${id} t${t}`;
    await retrying(log, () =>
      store.commit(id, {
        operationId: `op ${content}`,
        append: [{ role: 'user', content }],
        increment: { turnCount: 1 },
      }),
    );
    log.acked.get(id)?.push(content);
    log.turns[c] = t + 1;
    await sleep(5);
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * Runs the writers, calls `failover` with the port of the master of the first session's
 * slot once every client has committed TURNS_BEFORE turns, lets them commit TURNS_AFTER
 * more, then checks the sessions.
 */
async function underWriters(
  c: TestCluster,
  prefix: string,
  failover: (owner: number) => Promise<void>,
): Promise<void> {
  const consoleError = vi.spyOn(console, 'error');
  const stores = await openClients(c, prefix);
  const log: Log = { acked: new Map(), errors: [], turns: [], stopAt: undefined, aborted: false };
  let writers: Promise<void>[] = [];
  try {
    for (const [ci, store] of stores.entries()) {
      log.turns[ci] = 0;
      for (let s = 0; s < SESSIONS_PER_CLIENT; s++) {
        log.acked.set(idOf(ci, s), []);
        await store.create({ id: idOf(ci, s), folder: 'failover', title: idOf(ci, s) });
      }
    }
    writers = stores.map((store, ci) => writer(store, ci, log));
    const failed = Promise.all(writers).then(() => undefined);
    await Promise.race([
      failed,
      until('the first turns', () => log.turns.every((t) => t >= TURNS_BEFORE)),
    ]);
    const owner = await masterOfKey(
      c.ports[0] as number,
      new KeySpace(prefix).session('c0-s0').meta,
    );
    const before = log.turns.reduce((a, b) => a + b, 0);
    await failover(owner);
    const during = log.turns.reduce((a, b) => a + b, 0) - before;
    log.stopAt = log.turns.map((t) => Math.min(MAX_TURNS, t + TURNS_AFTER));
    await failed;
    await expectWhole(stores[0] as RedisStore, log);
    const unexpected = log.errors.filter(
      (e) => !(isSessionKitError(e, 'unavailable') && e.retryable),
    );
    expect(unexpected.map(String), 'errors other than unavailable/retryable').toEqual([]);
    const kinds = new Map<string, number>();
    for (const e of log.errors) {
      const kind = String((e as Error).message)
        .replace(/session "[^"]+"/g, 'session')
        .slice(0, 120);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    console.log(
      `[failover] ${prefix}: ${log.turns.reduce((a, b) => a + b, 0)} turns acknowledged (${during} while failing over), ${log.errors.length} unavailable errors retried:`,
      Object.fromEntries(kinds),
    );
    expect(consoleError.mock.calls.flat().join('\n')).not.toContain('Unhandled error event');
  } finally {
    log.aborted = true;
    await Promise.allSettled(writers);
    consoleError.mockRestore();
    for (const store of stores) {
      await store.close();
      if (store.client.status !== 'end') store.client.disconnect();
    }
  }
}

/** Every acknowledged turn once and in order, counters exact, every summary equal to load. */
async function expectWhole(store: RedisStore, log: Log): Promise<void> {
  for (const [id, turns] of log.acked) {
    const session = await store.load(id);
    expect(
      session.messages.map((m) => (m as Message).content),
      id,
    ).toEqual(turns);
    expect(session.turnCount, `${id} turnCount`).toBe(turns.length);
  }
  const listed = await listEverything(store);
  expect(listed.map((s) => s.id).sort()).toEqual([...log.acked.keys()].sort());
  for (const summary of listed) {
    const { messages, ...rest } = await store.load(summary.id);
    expect(summary).toEqual({ ...rest, messageCount: messages.length });
  }
}

/**
 * SIGKILLs the master on `owner`, waits for its replica's promotion, then restarts the
 * killed node (it rejoins as the new master's replica) and waits for every replica's link.
 */
async function killAndPromote(c: TestCluster, owner: number): Promise<void> {
  const index = c.ports.indexOf(owner);
  const replica = await replicaOf(c.ports, owner);
  await stopServer(c.servers[index] as ServerProcess);
  await waitForMaster(replica);
  await waitForClusterOk(c.ports.filter((p) => p !== owner));
  // The promoted master has no replica until the killed node is back (as its replica,
  // with no data of its own): meanwhile its slots' writes are not confirmed and fail
  // `unavailable`, and the writers retry them.
  c.servers[index] = await startServer(owner, c.dir, c.argsOf(index));
  await waitForClusterOk(c.ports);
  await waitForReplicas(c.ports, 3);
}

describe.skipIf(!available)('redis › Cluster failover under writers (waitReplicas: 1)', () => {
  it("a resolved write is on the replica of its slot's master; WAIT asks that master", async () => {
    const c = cluster as TestCluster;
    const prefix = 'confirmed:';
    const nodes = c.ports.map((port) => ({ host: '127.0.0.1', port }));
    const store = await openRedisStore({ cluster: { nodes } }, { prefix, ...WAIT });
    const strict = await openRedisStore(
      { cluster: { nodes } },
      { prefix, waitReplicas: 2, waitReplicasTimeoutMs: 100 },
    );
    const replicas: Redis[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const id = `s${i}`;
        await store.create({ id });
        await store.commit(id, { append: [{ role: 'user', content: 'one' }] });
        const meta = new KeySpace(prefix).session(id).meta;
        const replica = new Redis({
          host: '127.0.0.1',
          port: await replicaOf(c.ports, await masterOfKey(c.ports[0] as number, meta)),
        });
        replica.on('error', () => {});
        replicas.push(replica);
        await replica.call('READONLY');
        expect(await replica.hget(meta, 'n'), id).toBe('1');
        // One replica per master: a WAIT that ran on the slot's master counts exactly one
        // (on a replica it would fail, counting none).
        await expect(
          strict.commit(id, { append: [{ role: 'user', content: 'two' }] }),
        ).rejects.toThrow(/only 1 of the 2 replicas/);
      }
    } finally {
      for (const r of replicas) r.disconnect();
      await store.close();
      await strict.close();
    }
  });

  it('(a) manual CLUSTER FAILOVER on a replica: no acknowledged turn lost', async () => {
    const c = cluster as TestCluster;
    await underWriters(c, 'manual:', async (owner) => {
      const replica = await replicaOf(c.ports, owner);
      expect(await cli(replica, 'cluster', 'failover')).toBe('OK');
      await waitForMaster(replica);
      await waitForClusterOk(c.ports);
      await waitForReplicas(c.ports, 3);
    });
  }, 60_000);

  it('(b) a master SIGKILLed, its replica promoted: no acknowledged turn lost', async () => {
    const c = cluster as TestCluster;
    await underWriters(c, 'killed:', (owner) => killAndPromote(c, owner));
  }, 60_000);
  it('(c) a master SIGKILLed in the middle of enforceMax: no session torn, no acknowledged delete undone', async () => {
    const c = cluster as TestCluster;
    const prefix = 'prune:';
    const nodes = c.ports.map((port) => ({ host: '127.0.0.1', port }));
    const store = await openRedisStore({ cluster: { nodes } }, { prefix, ...WAIT });
    try {
      // 24 roots: the pass deletes 20 of them and promotes 12 branches (tens of ms), so a
      // kill within its first 20 ms lands in the middle of it.
      await plantRoots(store, 'r', 24);
      const roots = await rootsOf(store);
      // The master of a random victim's slot, killed at a random moment of the pass.
      const victim = roots[4 + Math.floor(Math.random() * (roots.length - 4))] as string;
      const owner = await masterOfKey(
        c.ports[0] as number,
        new KeySpace(prefix).session(victim).meta,
      );
      let settled = false;
      const pass = store.enforceMax(4).then(
        () => 'done',
        (e: unknown) => (e as { code?: string }).code,
      );
      void pass.then(() => {
        settled = true;
      });
      await sleep(Math.random() * 20);
      const early = settled;
      await killAndPromote(c, owner);
      const outcome = await pass;
      expect(['done', 'unavailable']).toContain(outcome);
      console.log(
        `[failover] enforceMax, the master of ${victim} killed ${early ? 'after' : 'during'} the pass: ${outcome}`,
      );
      // A pass that resolved deleted every root past the newest four, for good: each
      // delete was confirmed by the replica that is the master now.
      const left = new Set(await rootsOf(store));
      if (outcome === 'done') expect(roots.slice(4).filter((id) => left.has(id))).toEqual([]);
      await expectPrunedWhole(store);
      await retryUnavailable(() => store.enforceMax(4));
      const after = new Set(await rootsOf(store));
      expect(roots.map((id) => after.has(id))).toEqual(roots.map((_, i) => i < 4));
      await expectPrunedWhole(store);
    } finally {
      await store.close();
    }
  }, 60_000);
});
