// Test stores on private key prefixes: every store of a test run gets a prefix no other
// run uses, and its keys are deleted afterwards (found with SCAN on every master).
import { randomBytes } from 'node:crypto';
import type { SessionSummary } from '@sessionkit/core';
import { type Cluster, Redis } from 'ioredis';
import { RedisStore, type RedisStoreOptions } from '../src/index.js';
import { REDIS_URL } from './env.js';

let counter = 0;

/** A key prefix no other test (in any process) uses. */
export function freshPrefix(): string {
  counter++;
  return `sktest:${process.pid}:${counter}:${randomBytes(4).toString('hex')}:`;
}

/** A standalone client on the test server whose connection errors never crash the process. */
export function newClient(): Redis {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  client.on('error', () => {});
  return client;
}

/** Deletes every key under `prefix` on every master of `client`. */
export async function dropPrefix(client: Redis | Cluster, prefix: string): Promise<number> {
  const nodes = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
  let deleted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      // One DEL per key: on a Cluster, keys of one node may sit in different slots.
      for (const key of keys) deleted += await node.del(key);
      cursor = next;
    } while (cursor !== '0');
  }
  return deleted;
}

/** Keys under `prefix` on every master. */
export async function keysUnder(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const nodes = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
  const out: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      out.push(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
  return out.sort();
}

/** Every session under the store's prefix, archived included, page by page. */
export async function listEverything(store: RedisStore): Promise<SessionSummary[]> {
  const all: SessionSummary[] = [];
  for (;;) {
    const page = await store.list({ includeArchived: true, limit: 1000, offset: all.length });
    all.push(...page);
    if (page.length < 1000) return all;
  }
}

/** Options of the factory's main stores beside the client and prefix. */
export type StoreOptions = Omit<RedisStoreOptions, 'client' | 'prefix'>;

/**
 * Stores over two shared clients (the store's and its peer's), on fresh prefixes; the main
 * stores take `options` (peers are made without them, so both kinds write the same data).
 */
export class StoreFactory {
  constructor(
    readonly main: () => Redis | Cluster,
    readonly peer: () => Redis | Cluster,
    readonly options: StoreOptions = {},
  ) {}

  create(): RedisStore {
    return new RedisStore({ ...this.options, client: this.main(), prefix: freshPrefix() });
  }

  peerOf(store: RedisStore): RedisStore {
    return new RedisStore({ client: this.peer(), prefix: store.prefix });
  }

  async destroy(store: RedisStore): Promise<void> {
    await store.close();
    await dropPrefix(this.main(), store.prefix);
  }
}
