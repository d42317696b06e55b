// Every command the store sends goes through here, so none is left unsettled. ioredis can
// hold a command for ever: with `autoResendUnfulfilledCommands: false` a command in flight
// when the connection drops is forgotten once the client reconnects (its promise never
// settles), and a command waits in the offline queue as long as `maxRetriesPerRequest`
// lets it. A `CallWatch` marks such calls lost: on a standalone client when the connection
// closes under them, on any client when they pass a deadline. A lost read runs once more;
// a lost write is settled through its token (`write-ledger.ts`).
import type { Redis } from 'ioredis';
import { isClusterClient } from './connection.js';
import type { StoreContext } from './context.js';
import { wrapRedisError } from './errors.js';
import { type LuaScript, type RedisClient, runScript } from './scripts.js';

/**
 * How long one command may stay unanswered before its call counts as lost (ms): far longer
 * than any single command of the store takes (a 20 MB transcript loads in about a second).
 */
export const CALL_DEADLINE_MS = 30_000;
/** How often pending calls are checked against the deadline (ms). */
const SWEEP_INTERVAL_MS = 1_000;

/** A call whose command may never be answered (its connection closed, or the deadline passed). */
export class CallLost extends Error {
  constructor(why: string) {
    super(`the command was lost: ${why}`);
    this.name = 'CallLost';
  }
}

interface PendingCall {
  since: number;
  lose(why: string): void;
}

/** Tracks a store's commands in flight and marks them lost (see the file comment). */
export class CallWatch {
  readonly #client: RedisClient;
  readonly #deadlineMs: number;
  readonly #pending = new Set<PendingCall>();
  #sweeper: ReturnType<typeof setInterval> | undefined;
  readonly #onClose = () => this.#loseAll('the connection closed');

  constructor(client: RedisClient, deadlineMs = CALL_DEADLINE_MS) {
    this.#client = client;
    this.#deadlineMs = deadlineMs;
    // A Cluster rejects the commands of a node connection that closes (and may send them
    // again itself); only a standalone client can forget them.
    if (!isClusterClient(client)) (client as Redis).on('close', this.#onClose);
  }

  /** Commands in flight now (for tests). */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Settles with `sent`, or rejects with `CallLost` first when the connection closes while it
   * is pending or it is still pending after the deadline. `sent` is never left unhandled.
   */
  track<T>(sent: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: PendingCall = {
        since: performance.now(),
        lose: (why) => reject(new CallLost(why)),
      };
      this.#pending.add(entry);
      this.#arm();
      sent.then(
        (value) => {
          this.#pending.delete(entry);
          resolve(value);
        },
        (error: unknown) => {
          this.#pending.delete(entry);
          reject(error);
        },
      );
    });
  }

  /** Stops watching the client (the store is closed). Calls still pending keep their deadline. */
  close(): void {
    if (!isClusterClient(this.#client)) {
      (this.#client as Redis).removeListener('close', this.#onClose);
    }
  }

  #loseAll(why: string): void {
    const lost = [...this.#pending];
    this.#pending.clear();
    for (const call of lost) call.lose(why);
  }

  #arm(): void {
    if (this.#sweeper !== undefined) return;
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS);
    this.#sweeper.unref();
  }

  #sweep(): void {
    const now = performance.now();
    for (const call of this.#pending) {
      if (now - call.since < this.#deadlineMs) continue;
      this.#pending.delete(call);
      call.lose(`no answer within ${this.#deadlineMs} ms`);
    }
    if (this.#pending.size === 0 && this.#sweeper !== undefined) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}

/** What running a command needs of the store. */
export type CallContext = Pick<StoreContext, 'client' | 'calls'>;

/**
 * Runs a command that may run twice (a read, or an idempotent index or router step), watched:
 * a lost call runs once more; driver errors are wrapped as sessionkit errors naming `doing`.
 */
export async function command<T>(
  ctx: CallContext,
  doing: string,
  run: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.calls.track(run());
    } catch (e) {
      if (!(e instanceof CallLost) || attempt >= 2) throw wrapRedisError(e, doing);
    }
  }
}

/** Runs a script that may run twice (`command`). */
export function call<T>(
  ctx: CallContext,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  doing: string,
): Promise<T> {
  return command(ctx, doing, () => runScript<T>(ctx.client, script, keys, args));
}
