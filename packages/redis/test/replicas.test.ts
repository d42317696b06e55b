// `waitReplicas` on standalone Redis: a private master with one replica, and a private
// server without replicas (where every write must fail clearly, not hang or pass).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSessionKitError, type SessionKitError } from '@sessionkit/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeySpace, RedisStore } from '../src/index.js';
import { cli, freePort, type ServerProcess, startServer, stopServer } from './cluster.js';
import { clusterAvailable } from './cluster-env.js';

const available = clusterAvailable('the waitReplicas tests did not run');
let dir = '';
const servers: ServerProcess[] = [];
let master = 0;
let replica = 0;
let lonely = 0;
const clients: Redis[] = [];

beforeAll(async () => {
  if (!available) return;
  dir = mkdtempSync(join(tmpdir(), 'sk-redis-replicas-'));
  master = await freePort();
  // The replica's full sync starts at once, not after Redis's default 5 s pause.
  const masterArgs = ['--dbfilename', 'master.rdb', '--repl-diskless-sync-delay', '0'];
  servers.push(await startServer(master, dir, masterArgs));
  replica = await freePort();
  servers.push(
    await startServer(replica, dir, [
      '--dbfilename',
      'replica.rdb',
      '--replicaof',
      '127.0.0.1',
      String(master),
    ]),
  );
  lonely = await freePort();
  servers.push(await startServer(lonely, dir, ['--dbfilename', 'lonely.rdb']));
  const deadline = Date.now() + 20_000;
  while (!(await cli(replica, 'info', 'replication')).includes('master_link_status:up')) {
    if (Date.now() > deadline) throw new Error('the replica did not link to its master');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  for (const s of servers) await stopServer(s);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function clientOn(port: number): Redis {
  const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 2 });
  client.on('error', () => {});
  clients.push(client);
  return client;
}

const say = (content: string) => ({ append: [{ role: 'user' as const, content }] });

describe('redis › waitReplicas options', () => {
  it('refuses counts and timeouts that are not positive integers', () => {
    const client = new Redis({ lazyConnect: true });
    for (const bad of [
      { waitReplicas: -1 },
      { waitReplicas: 1.5 },
      { waitReplicas: 1, waitReplicasTimeoutMs: 0 },
      { waitReplicasTimeoutMs: 100 },
    ]) {
      expect(() => new RedisStore({ client, ...bad }), JSON.stringify(bad)).toThrow(
        expect.objectContaining({ code: 'invalid_argument' }),
      );
    }
    client.disconnect();
  });
});

describe.skipIf(!available)('redis › waitReplicas on standalone Redis', () => {
  it('resolves a write only once the replica has it', async () => {
    const prefix = 'wait1:';
    const store = new RedisStore({ client: clientOn(master), prefix, waitReplicas: 1 });
    await store.create({ id: 's' });
    const meta = new KeySpace(prefix).session('s').meta;
    for (let t = 1; t <= 20; t++) {
      await store.commit('s', say(`t${t}`));
      // Read on the replica right away: WAIT returned, so it has applied the write.
      expect(await cli(replica, 'hget', meta, 'n')).toBe(String(t));
    }
    await store.close();
  });

  it('fails unavailable when fewer replicas confirm; a retry with the operationId applies once', async () => {
    const prefix = 'wait2:';
    const client = clientOn(master);
    const strict = new RedisStore({
      client,
      prefix,
      waitReplicas: 2,
      waitReplicasTimeoutMs: 100,
    });
    const store = new RedisStore({ client, prefix, waitReplicas: 1 });
    await store.create({ id: 's' });
    const turn = { ...say('once'), operationId: 'op-1', increment: { turnCount: 1 } };
    const error = (await strict.commit('s', turn).catch((e: unknown) => e)) as SessionKitError;
    expect(isSessionKitError(error, 'unavailable'), String(error)).toBe(true);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('only 1 of the 2 replicas');
    expect(error.message).toContain('may have landed');
    // It landed on the master; a retry naming the same operation is answered, not applied.
    await expect(strict.commit('s', turn)).rejects.toMatchObject({ code: 'unavailable' });
    const result = await store.commit('s', turn);
    expect(result.messageCount).toBe(1);
    const loaded = await store.load('s');
    expect(loaded.messages.map((m) => m.content)).toEqual(['once']);
    expect(loaded.turnCount).toBe(1);
    await strict.close();
    await store.close();
  });

  it('without replicas every write fails clearly, and reads work', async () => {
    const prefix = 'wait3:';
    const client = clientOn(lonely);
    const plain = new RedisStore({ client, prefix });
    await plain.create({ id: 's' });
    const store = new RedisStore({ client, prefix, waitReplicas: 1, waitReplicasTimeoutMs: 50 });
    const error = (await store.commit('s', say('x')).catch((e: unknown) => e)) as Error;
    expect(isSessionKitError(error, 'unavailable'), String(error)).toBe(true);
    expect(error.message).toContain('only 0 of the 1 replicas');
    await expect(store.create({ id: 't' })).rejects.toMatchObject({ code: 'unavailable' });
    expect((await store.load('s')).messages.map((m) => m.content)).toEqual(['x']);
    await expect(store.load('t')).rejects.toMatchObject({ code: 'not_found' });
    await plain.close();
    await store.close();
  });
});
