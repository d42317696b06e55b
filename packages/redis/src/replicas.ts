// Writes confirmed by replicas (the `waitReplicas` option). Redis replication is
// asynchronous: a master acknowledges a write before any replica has it, so a failover
// after a master's death can lose it. `WAIT numreplicas timeout` blocks the connection
// that sent it until that many replicas have acknowledged every write the connection made
// so far. So the write script, a small "touch" and the WAIT go out as one pipeline: one
// connection (on a Cluster the pipeline goes to the node that owns the session's slot),
// one round trip, and the WAIT counts the replicas that have this very write.
import type { Pipeline } from 'ioredis';
import { call, command } from './calls.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { LuaScript, type RedisClient } from './scripts.js';

/** How a store waits for replicas after a write (`RedisStoreOptions.waitReplicas`). */
export interface ReplicaWait {
  /** Replicas that must acknowledge a write before it resolves (≥ 1). */
  replicas: number;
  /** How long `WAIT` may block (ms, ≥ 1). */
  timeoutMs: number;
}

/** Default `waitReplicasTimeoutMs`: long enough for a loaded replica, short for a caller. */
export const DEFAULT_WAIT_TIMEOUT_MS = 1_000;

/** How often a pipeline answered `MOVED` (the slot map was out of date) is sent again. */
const MOVED_ATTEMPTS = 10;
const MOVED_PAUSE_MS = 100;

/**
 * Re-sets the remaining TTL of the session's ledger generations (KEYS): a write that
 * changes nothing, but is replicated. A write script that answers from the ledger or from
 * a recorded operation id writes nothing, and `WAIT` only counts what the connection wrote;
 * after this, it counts everything the master had before it, the earlier run included.
 */
const TOUCH = new LuaScript(
  'touchLedger',
  `for _, key in ipairs(KEYS) do
  local ttl = redis.call('PTTL', key)
  if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
end
return 0`,
);

/**
 * The `waitReplicas` / `waitReplicasTimeoutMs` options checked; `undefined` when off.
 * Throws `invalid_argument` for a count or timeout that is not a positive integer.
 */
export function replicaWaitOf(
  replicas: number | undefined,
  timeoutMs: number | undefined,
): ReplicaWait | undefined {
  const count = replicas ?? 0;
  if (!Number.isSafeInteger(count) || count < 0) {
    throw errors.invalid(
      `RedisStore: waitReplicas must be a non-negative integer, got ${String(replicas)}`,
    );
  }
  const timeout = timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  if (!Number.isSafeInteger(timeout) || timeout < 1) {
    throw errors.invalid(
      `RedisStore: waitReplicasTimeoutMs must be a positive integer, got ${String(timeoutMs)}`,
    );
  }
  if (count === 0) {
    if (timeoutMs !== undefined) {
      throw errors.invalid('RedisStore: waitReplicasTimeoutMs needs waitReplicas');
    }
    return undefined;
  }
  return { replicas: count, timeoutMs: timeout };
}

/** A script's reply with the number of replicas that confirmed it. */
export interface Confirmed<T> {
  reply: T;
  replicas: number;
}

/**
 * Runs `script` (keys in one slot), then a ledger touch of session `id` (when given) and
 * `WAIT`, as one pipeline on one connection. Resolves with the script's reply and the
 * replicas that acknowledged it; a pipeline answered `MOVED` (a failover moved the slot
 * and the script did not run) is sent again once the slot map is refreshed. Driver errors
 * are thrown as they are: a `ReplyError` of the script means it did not run.
 */
export async function runConfirmed<T>(
  client: RedisClient,
  wait: ReplicaWait,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  touch: readonly string[],
): Promise<Confirmed<T>> {
  let source = false;
  for (let attempt = 1; ; attempt++) {
    const p = client.pipeline() as Pipeline;
    if (source) p.eval(script.source, keys.length, ...keys, ...args);
    else p.evalsha(script.sha, keys.length, ...keys, ...args);
    if (touch.length > 0) p.eval(TOUCH.source, touch.length, ...touch);
    p.wait(wait.replicas, wait.timeoutMs);
    const results = (await p.exec()) ?? [];
    const [error, reply] = results[0] ?? [new Error('the pipeline returned no reply')];
    if (error) {
      const message = error.message;
      if (!source && message.startsWith('NOSCRIPT')) {
        source = true;
        continue;
      }
      if (
        message.startsWith('MOVED') &&
        attempt < MOVED_ATTEMPTS &&
        'refreshSlotsCache' in client
      ) {
        client.refreshSlotsCache();
        await new Promise((resolve) => setTimeout(resolve, MOVED_PAUSE_MS));
        continue;
      }
      throw error;
    }
    const [waitError, count] = results[results.length - 1] ?? [];
    // A WAIT that failed confirmed nothing.
    return { reply: reply as T, replicas: waitError ? 0 : Number(count) };
  }
}

/**
 * Throws when a write that landed (`reply` a ledger outcome) is confirmed by fewer
 * replicas than asked: `unavailable` (retryable), saying the write may have landed. A
 * fence (`f`, a lost write settled as not applied) that no replica confirmed is reported
 * the same way: a failover could lose the fence and let the write land later.
 */
export function assertConfirmed(
  wait: ReplicaWait | undefined,
  result: Confirmed<unknown>,
  doing: string,
): void {
  if (wait === undefined || typeof result.reply !== 'string') return;
  if (result.replicas >= wait.replicas) return;
  throw unconfirmed(wait, result.replicas, doing);
}

function unconfirmed(wait: ReplicaWait, got: number, doing: string) {
  return errors.make(
    'unavailable',
    `backend unavailable: ${doing}: the write may have landed on the master, but only ${got} of the ${wait.replicas} replicas asked for (waitReplicas) confirmed it within ${wait.timeoutMs} ms, so a failover could still lose it — retrying a commit with the same operationId is safe`,
  );
}

/**
 * Runs an index or router script that may run twice (`command`) and waits for replicas to
 * confirm it; with `waitReplicas` off, a plain `call`. Throws `unavailable` (retryable)
 * when fewer replicas than asked confirm it: it has landed on the master, and running it
 * again is safe (a create's registration is followed by the session's write only once it
 * is confirmed; bindings, follows and child links are set, not added to).
 */
export async function confirmedCall<T>(
  ctx: StoreContext,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  doing: string,
): Promise<T> {
  const wait = ctx.replicaWait;
  if (wait === undefined) return call<T>(ctx, script, keys, args, doing);
  const result = await command(ctx, doing, () =>
    runConfirmed<T>(ctx.client, wait, script, keys, args, []),
  );
  if (result.replicas < wait.replicas) {
    throw errors.unavailable(
      `${doing}: only ${result.replicas} of the ${wait.replicas} replicas asked for (waitReplicas) confirmed it within ${wait.timeoutMs} ms, so a failover could still lose it`,
    );
  }
  return result.reply;
}

/**
 * Waits for replicas to confirm what the master of session `id`'s slot holds now (a ledger
 * touch and `WAIT`): for a commit answered from a recorded operation id without a write.
 * Throws `unavailable` as `assertConfirmed` does, or when Redis cannot be reached.
 */
export async function confirmSession(ctx: StoreContext, id: string, doing: string): Promise<void> {
  const wait = ctx.replicaWait;
  if (wait === undefined) return;
  const k = ctx.keys.session(id);
  const touch = [k.ledger, k.ledgerPrevious];
  const result = await command(ctx, doing, () =>
    runConfirmed<unknown>(ctx.client, wait, TOUCH, touch, [], []),
  );
  if (result.replicas < wait.replicas) throw unconfirmed(wait, result.replicas, doing);
}
