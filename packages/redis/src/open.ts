// Owned stores: openRedisStore() and the redis:// / rediss:// adapter for core's openStore.
import type { Message, Store } from '@sessionkit/core';
import type { StoreAdapter } from '@sessionkit/core/adapter';
import { assertKnownKeys } from '@sessionkit/core/adapter';
import { ownedClient, type RedisConnection } from './connection.js';
import { errors, wrapRedisError } from './errors.js';
import { OWNED, RedisStore } from './store.js';

/** Options of `openRedisStore`. */
export interface OpenRedisStoreOptions {
  /** Key prefix. Default `"sk:"` (or the URL's `prefix`). */
  prefix?: string | undefined;
  /** Session TTL in seconds after its last write. Default none (or the URL's `ttl`). */
  ttlSeconds?: number | undefined;
  /** Replicas that must have a write before it resolves (`RedisStoreOptions.waitReplicas`). */
  waitReplicas?: number | undefined;
  /** How long a write waits for them (ms; `RedisStoreOptions.waitReplicasTimeoutMs`). */
  waitReplicasTimeoutMs?: number | undefined;
}

const OPEN_OPTION_KEYS = ['prefix', 'ttlSeconds', 'waitReplicas', 'waitReplicasTimeoutMs'];

/**
 * Opens a store that owns its client: from a `redis://` / `rediss://` URL (query
 * `prefix`, `ttl` in seconds, `cluster=true` for a Cluster seed node), `{ redis:
 * RedisOptions }` or `{ cluster: { nodes, options } }`. Resolves once Redis answers a
 * PING; `close()` quits the client. Options given both in the URL and here must agree.
 * Throws `invalid_argument` (bad URL, option or prefix), `unavailable` when Redis cannot
 * be reached (the client is closed then).
 */
export async function openRedisStore<M = Message>(
  connection: RedisConnection,
  options: OpenRedisStoreOptions = {},
): Promise<RedisStore<M>> {
  assertKnownKeys(errors, options, OPEN_OPTION_KEYS, 'openRedisStore');
  const { client, settings } = ownedClient(connection);
  const prefix = agree('prefix', settings.prefix, options.prefix);
  const ttlSeconds = agree('ttl', settings.ttlSeconds, options.ttlSeconds);
  let store: RedisStore<M>;
  try {
    const { waitReplicas, waitReplicasTimeoutMs } = options;
    store = new RedisStore<M>({
      client,
      prefix,
      ttlSeconds,
      waitReplicas,
      waitReplicasTimeoutMs,
      [OWNED]: true,
    } as never);
  } catch (e) {
    client.disconnect();
    throw e;
  }
  try {
    await client.ping();
  } catch (e) {
    await store.close();
    throw wrapRedisError(e, 'openRedisStore');
  }
  return store;
}

function agree<T>(name: string, fromUrl: T | undefined, given: T | undefined): T | undefined {
  if (fromUrl !== undefined && given !== undefined && fromUrl !== given) {
    throw errors.invalid(`openRedisStore: ${name} given in the URL and in options differs`);
  }
  return fromUrl ?? given;
}

/**
 * Opens `redis://` and `rediss://` URLs for core's `openStore` (see `openRedisStore` for
 * the query options). Options: `prefix`, `ttlSeconds`, `waitReplicas`, `waitReplicasTimeoutMs`. Throws `invalid_argument` naming an
 * unknown URL or options key; `unavailable`.
 */
export const storeAdapter: StoreAdapter = {
  schemes: ['redis', 'rediss'],
  async open(url: URL, options?: Record<string, unknown>): Promise<Store<Message>> {
    assertKnownKeys(errors, options, OPEN_OPTION_KEYS, 'openStore(redis:)');
    return openRedisStore<Message>(url.href, options as OpenRedisStoreOptions);
  },
};
