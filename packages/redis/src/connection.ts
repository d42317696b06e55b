// Owned clients: made from a redis:// or rediss:// URL or from ioredis options, with
// settings that turn an outage into prompt `unavailable` errors instead of hanging calls.
import { Cluster, type ClusterNode, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { errors } from './errors.js';
import type { RedisClient } from './scripts.js';

/**
 * What owned clients get unless the caller's options say otherwise:
 * - `maxRetriesPerRequest: 2`: a call made while Redis is unreachable fails (`unavailable`)
 *   after two reconnection attempts instead of waiting for ever;
 * - `autoResendUnfulfilledCommands: false`: a write in flight when the connection drops is
 *   not sent again behind the caller's back; the store settles it through its token
 *   instead (it landed, or it is fenced and fails `unavailable`), so its outcome is known
 *   when the call returns (every write also carries a token, so a re-sent one would apply
 *   once).
 */
export const OWNED_CLIENT_DEFAULTS: RedisOptions = {
  maxRetriesPerRequest: 2,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 5_000,
};

/** A connection as `openRedisStore` accepts it. */
export type RedisConnection =
  | string
  | { redis: RedisOptions }
  | { cluster: { nodes: ClusterNode[]; options?: ClusterOptions | undefined } };

/** Settings read from a URL's query, beside the connection. */
export interface UrlSettings {
  prefix?: string | undefined;
  ttlSeconds?: number | undefined;
  cluster: boolean;
}

const URL_PARAMS = ['prefix', 'ttl', 'cluster'] as const;

/**
 * Parses `redis://[user:password@]host[:port][/db][?prefix=P&ttl=SECONDS&cluster=true]`
 * (`rediss://` for TLS). With `cluster=true` the host is a seed node of a Redis Cluster
 * (a database number is not allowed). Throws `invalid_argument` naming an unknown parameter
 * or a bad value; never echoes the password.
 */
export function parseRedisUrl(url: URL): { options: RedisOptions; settings: UrlSettings } {
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw errors.invalid(`unsupported URL scheme "${url.protocol}" (use redis: or rediss:)`);
  }
  for (const key of url.searchParams.keys()) {
    if (!(URL_PARAMS as readonly string[]).includes(key)) {
      throw errors.invalid(`unknown URL option "${key}" (known: ${URL_PARAMS.join(', ')})`);
    }
  }
  const options: RedisOptions = {
    host: url.hostname || '127.0.0.1',
    port: url.port ? Number(url.port) : 6379,
  };
  if (url.username) options.username = decodeURIComponent(url.username);
  if (url.password) options.password = decodeURIComponent(url.password);
  if (url.protocol === 'rediss:') options.tls = {};
  const db = url.pathname.replace(/^\//, '');
  if (db !== '') {
    if (!/^\d+$/.test(db))
      throw errors.invalid(`the URL path must be a database number, got "${db}"`);
    options.db = Number(db);
  }
  const settings: UrlSettings = { cluster: false };
  const prefix = url.searchParams.get('prefix');
  if (prefix !== null) settings.prefix = prefix;
  const ttl = url.searchParams.get('ttl');
  if (ttl !== null) {
    if (!/^\d+$/.test(ttl))
      throw errors.invalid(`URL option ttl must be whole seconds, got "${ttl}"`);
    settings.ttlSeconds = Number(ttl);
  }
  const cluster = url.searchParams.get('cluster');
  if (cluster !== null) {
    if (cluster !== 'true' && cluster !== 'false') {
      throw errors.invalid(`URL option cluster must be true or false, got "${cluster}"`);
    }
    settings.cluster = cluster === 'true';
    if (settings.cluster && options.db !== undefined) {
      throw errors.invalid('a Redis Cluster has no database numbers: drop the URL path');
    }
  }
  return { options, settings };
}

/** A new owned client for `connection`, with an 'error' listener so outages never crash the process. */
export function ownedClient(connection: RedisConnection): {
  client: RedisClient;
  settings: UrlSettings;
} {
  let client: RedisClient;
  let settings: UrlSettings = { cluster: false };
  if (typeof connection === 'string') {
    let url: URL;
    try {
      url = new URL(connection);
    } catch {
      throw errors.invalid('the Redis connection string is not a valid URL');
    }
    const parsed = parseRedisUrl(url);
    settings = parsed.settings;
    client = settings.cluster
      ? clusterClient(
          [{ host: parsed.options.host, port: parsed.options.port }],
          {},
          parsed.options,
        )
      : new Redis({ ...OWNED_CLIENT_DEFAULTS, ...parsed.options });
  } else if (typeof connection === 'object' && connection !== null && 'cluster' in connection) {
    client = clusterClient(connection.cluster.nodes, connection.cluster.options ?? {}, {});
    settings.cluster = true;
  } else if (typeof connection === 'object' && connection !== null && 'redis' in connection) {
    client = new Redis({ ...OWNED_CLIENT_DEFAULTS, ...connection.redis });
  } else {
    throw errors.invalid('pass a redis:// URL, { redis: RedisOptions } or { cluster: { nodes } }');
  }
  // ioredis emits 'error' on every failed (re)connection; the failed calls carry the error
  // to their callers, so the event itself needs nothing more than a listener.
  client.on('error', () => {});
  return { client, settings };
}

function clusterClient(
  nodes: ClusterNode[],
  options: ClusterOptions,
  redis: RedisOptions,
): Cluster {
  return new Cluster(nodes, {
    ...options,
    redisOptions: { ...OWNED_CLIENT_DEFAULTS, ...redis, ...options.redisOptions },
  });
}

/** True for a `Cluster` client (from any copy of ioredis). */
export function isClusterClient(client: unknown): boolean {
  return (client as { isCluster?: unknown }).isCluster === true;
}

/**
 * Refuses a client the store cannot be safe with (`invalid_argument`, naming the setting):
 * - `keyPrefix` (on the client, or a Cluster's `redisOptions`): ioredis prefixes the keys
 *   of commands but not `SCAN` patterns, so `repair()` would see no session and drop every
 *   listing entry — use the store's own `prefix` option instead;
 * - a Cluster with `scaleReads` other than `"master"`: replicas lag, so a read could miss
 *   an acknowledged write (and a repair act on an old view).
 * Every other setting is safe: see "Connections and lost replies" in the README.
 */
export function assertSafeClient(client: RedisClient): void {
  const options = (client as unknown as { options?: Record<string, unknown> }).options ?? {};
  const redisOptions = (options.redisOptions ?? {}) as Record<string, unknown>;
  if (options.keyPrefix || redisOptions.keyPrefix) {
    throw errors.invalid(
      'RedisStore: the client has keyPrefix set, which SCAN does not honour; use the store option prefix instead',
    );
  }
  if (isClusterClient(client) && (options.scaleReads ?? 'master') !== 'master') {
    throw errors.invalid(
      `RedisStore: the Cluster client reads from replicas (scaleReads "${String(options.scaleReads)}"), which can miss acknowledged writes; use scaleReads "master"`,
    );
  }
}
