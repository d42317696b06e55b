// Exactly-once writes. Every write script carries a token naming that one call (kept
// across its retries) and records token → outcome in the session's ledger in the same
// atomic step; a script that finds its token already there writes nothing and answers
// with the recorded outcome. So a script that runs twice — ioredis re-sending it after a
// reconnect, a Cluster re-sending it after a node's connection closed — applies once,
// and a call whose reply was lost learns what landed: `SETTLE` answers the recorded
// outcome, or records the token as not applied (`f`) so that no later run of it can land.
import { randomBytes } from 'node:crypto';
import { CallLost, command } from './calls.js';
import type { StoreContext } from './context.js';
import { errors, wrapRedisError } from './errors.js';
import { SCRIPTS } from './lua/index.js';
import { assertConfirmed, type Confirmed, runConfirmed } from './replicas.js';
import { type LuaScript, runScript } from './scripts.js';

/** Random per process: tokens of two processes never collide. */
const PROCESS_NONCE = randomBytes(9).toString('base64');
let tokenCounter = 0;

/** A new token naming one write call (and a new session's life, for a create). */
export function writeToken(): string {
  tokenCounter++;
  return `${PROCESS_NONCE}${tokenCounter.toString(36)}`;
}

/** The ledger outcome of a write settled as not applied. */
const NOT_APPLIED = 'f';
/**
 * How long a lost write's outcome is sought before `unavailable` (ms): long enough to ride out
 * a reconnect or a quick restart, short enough that a call during an outage fails promptly.
 */
const SETTLE_BUDGET_MS = 3_000;
/** Pause between attempts to settle while Redis does not answer (ms). */
const SETTLE_PAUSE_MS = 200;

/**
 * Runs a write script of session `id` whose token is `token` (already among `args`) and
 * returns its reply: a ledger outcome (a string: the write landed, in this run or an
 * earlier one) or the script's own reply for a write it did not apply (missing, taken,
 * moved). When the reply is lost (the connection closed, a timeout, ioredis gave up) the
 * outcome is settled through the ledger. With `waitReplicas`, a write that landed (now or
 * earlier) resolves only once that many replicas have it. Throws `unavailable` (retryable)
 * when the write did not land and never will, when Redis could not be asked in time, or
 * when fewer replicas than asked confirmed it (it may have landed); other driver errors as
 * `wrapRedisError` maps them.
 */
export async function writeOnce<T>(
  ctx: StoreContext,
  script: LuaScript,
  id: string,
  keys: readonly string[],
  args: readonly (string | number)[],
  token: string,
  doing: string,
): Promise<T | string> {
  let result: Confirmed<T | string>;
  try {
    result = await ctx.calls.track(send<T | string>(ctx, script, id, keys, args));
  } catch (e) {
    // A reply error means the server refused the script before running it (MOVED, LOADING,
    // BUSY …); anything else may have happened after it ran.
    if (!(e instanceof CallLost) && e instanceof Error && e.name === 'ReplyError') {
      throw wrapRedisError(e, doing);
    }
    result = await settle(ctx, id, token, doing, e);
  }
  // Before the "did not land" below: an unconfirmed fence is no promise that it never will.
  assertConfirmed(ctx.replicaWait, result, doing);
  if (result.reply === NOT_APPLIED) {
    throw errors.unavailable(
      `${doing}: the connection to Redis was lost and the write did not land`,
    );
  }
  return result.reply;
}

/**
 * Runs a write (or settle) script of session `id`: with `waitReplicas`, in one pipeline
 * with a ledger touch and `WAIT` (`replicas.ts`); otherwise alone, confirmed by nobody.
 */
function send<T>(
  ctx: StoreContext,
  script: LuaScript,
  id: string,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<Confirmed<T>> {
  const wait = ctx.replicaWait;
  if (wait === undefined) {
    return runScript<T>(ctx.client, script, keys, args).then((reply) => ({ reply, replicas: 0 }));
  }
  const k = ctx.keys.session(id);
  return runConfirmed<T>(ctx.client, wait, script, keys, args, [k.ledger, k.ledgerPrevious]);
}

/** The outcome of a write whose reply was lost: the recorded one, or `f` once fenced. */
async function settle(
  ctx: StoreContext,
  id: string,
  token: string,
  doing: string,
  lost: unknown,
): Promise<Confirmed<string>> {
  const giveUpAt = performance.now() + SETTLE_BUDGET_MS;
  let last: unknown = lost;
  const settling = `${doing} (settling a lost reply)`;
  const keys = ctx.keys.sessionKeyList(id);
  while (performance.now() < giveUpAt) {
    try {
      return await command(ctx, settling, () =>
        send<string>(ctx, SCRIPTS.settle, id, keys, [token]),
      );
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'unavailable') throw e;
      last = e;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_PAUSE_MS));
    }
  }
  // Not the factory's "safe to retry": whether it landed is unknown.
  throw errors.make(
    'unavailable',
    `backend unavailable: ${doing}: Redis did not answer, so the write may or may not have landed`,
    { cause: last },
  );
}

/** The fields of a ledger outcome after its one-letter kind ('w 5 3 10 1700000000000' → [5, 3, 10, …]). */
export function outcomeNumbers(outcome: string): number[] {
  // One split, no intermediate strings or arrays: this runs on every write.
  const fields = outcome.split(' ');
  const numbers: number[] = [];
  for (let i = 1; i < fields.length; i++) numbers.push(Number(fields[i]));
  return numbers;
}
