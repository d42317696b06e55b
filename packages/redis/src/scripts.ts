// Running the Lua scripts: EVALSHA first, EVAL once when the server does not know the
// script yet (a new server, SCRIPT FLUSH, a failover to a node that never saw it).
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** A standalone client or a Cluster client. */
export type RedisClient = Redis | Cluster;

/** A Lua script with its SHA1, computed once. */
export class LuaScript {
  readonly sha: string;
  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }
}

/**
 * Runs `script` with `keys` (all in one hash slot on a Cluster: ioredis routes by the first
 * key) and `args`. Driver errors are thrown as they are (the caller wraps them). Not an
 * `async` function: one promise less on every call.
 */
export function runScript<T = unknown>(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<T> {
  const sent = client.evalsha(script.sha, keys.length, ...keys, ...args) as Promise<T>;
  return sent.catch((e: unknown) => {
    if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
    return client.eval(script.source, keys.length, ...keys, ...args) as Promise<T>;
  });
}
