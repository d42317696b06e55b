// Backends killed with pg_terminate_backend (57P01) every few milliseconds while every
// kind of write runs: the process never crashes, every failure is `unavailable` (or a
// contract error the workload itself provokes), and the store is consistent afterwards.
// Duration: $SESSIONKIT_PG_KILL_TEST_MS (default 8000 ms).
import { randomBytes } from 'node:crypto';
import { isSessionKitError, type JsonValue, type Message, newSessionId } from '@sessionkit/core';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore, PostgresStore } from '../src/index.js';
import { POSTGRES_URL, postgresAvailable } from './env.js';
import { admin, dropSchema, endAdmin, freshSchema } from './harness.js';

const available = postgresAvailable('the PostgreSQL kill test did not run');
const DURATION_MS = Number(process.env.SESSIONKIT_PG_KILL_TEST_MS ?? 8000);

afterAll(async () => {
  if (available) await endAdmin();
});

type Op =
  | 'create'
  | 'commit'
  | 'commitPatch'
  | 'replace'
  | 'branch'
  | 'clone'
  | 'merge'
  | 'delete'
  | 'save'
  | 'append'
  | 'status'
  | 'router'
  | 'enforceMax'
  | 'window';

// Contract errors the workload provokes on its own (ids deleted by a concurrent delete or
// enforceMax, merges of moved parents, saves racing commits).
const LEGIT: Record<Op, string[]> = {
  create: [],
  commit: ['not_found'],
  commitPatch: ['not_found', 'conflict'],
  replace: ['not_found'],
  branch: ['not_found', 'invalid_argument'],
  clone: ['not_found'],
  merge: ['not_found', 'merge_diverged', 'invalid_argument'],
  delete: ['not_found'],
  save: ['not_found', 'conflict'],
  append: ['not_found'],
  status: ['not_found'],
  router: ['not_found'],
  enforceMax: [],
  window: ['not_found'],
};
const OPS = Object.keys(LEGIT) as Op[];

// Keys such as __proto__ are data: built with JSON.parse, as an object literal would set the prototype.
const proto = (json: string) => JSON.parse(json) as Record<string, JsonValue>;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `call()`, run again while it fails `unavailable` (at most 10 times: a pool's worth of clients). */
async function retriedOnUnavailable<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (attempt >= 10 || !isSessionKitError(e, 'unavailable')) throw e;
    }
  }
}

async function runOp(store: PostgresStore, op: Op, ids: string[]): Promise<void> {
  const id = ids.length > 0 ? pick(ids) : undefined;
  const msg = (t: string): Message => ({ role: 'user', content: `${t} ${Math.random()}` });
  if (op === 'create' || id === undefined) {
    const s = await store.create({ id: newSessionId(), title: 'k', messages: [msg('first')] });
    ids.push(s.id);
    return;
  }
  switch (op) {
    case 'commit':
      await store.commit(id, {
        append: [msg('turn')],
        increment: { tokenCount: 3, costUsd: 0.01 },
      });
      return;
    case 'commitPatch': {
      const s = await store.load(id);
      await store.commit(id, {
        expectedRevision: s.revision,
        patch: {
          title: `t${s.revision}`,
          metadata: proto('{"__proto__":"x","k":"v"}') as Record<string, string>,
        },
      });
      return;
    }
    case 'replace':
      await store.commit(id, { replace: [msg('r0'), msg('r1')] });
      return;
    case 'branch': {
      const s = await store.loadMessageWindow(id, { last: 0 });
      ids.push((await store.branch(id, s.messageCount)).id);
      return;
    }
    case 'clone':
      ids.push((await store.clone(id)).id);
      return;
    case 'merge':
      await store.merge(id);
      return;
    case 'delete':
      await store.delete(id);
      ids.splice(ids.indexOf(id), 1);
      return;
    case 'save': {
      const s = await store.load(id);
      await store.save({
        ...s,
        messages: [...s.messages, msg('saved')],
        state: proto('{"__proto__":1}'),
      });
      return;
    }
    case 'append':
      await store.append(id, 'evt', proto('{"__proto__":{"n":1}}'));
      return;
    case 'status':
      await store.saveRuntimeStatus(id, proto('{"phase":"x","__proto__":2}'));
      await store.loadRuntimeStatus(id);
      return;
    case 'router':
      await store.bind('tg', `chat${Math.floor(Math.random() * 5)}`, '', id);
      await store.resolve('tg', 'chat1', '', '');
      return;
    case 'enforceMax':
      await store.enforceMax(40);
      return;
    case 'window':
      await store.loadMessages(id, { last: 2 });
      return;
  }
}

describe.runIf(available)('postgres › backends killed during every kind of write', () => {
  it(
    `never crashes the process; every failure is unavailable or a contract error (${DURATION_MS} ms of kills)`,
    async () => {
      const app = `sk_kill_${process.pid}_${randomBytes(3).toString('hex')}`;
      const schemaA = freshSchema();
      const schemaB = freshSchema();
      const crashes: unknown[] = [];
      const onCrash = (e: unknown) => crashes.push(e);
      process.on('uncaughtException', onCrash);
      process.on('unhandledRejection', onCrash);
      // A borrowed pool (with the 'error' listener every pg pool needs) and an owned one
      // opened from a URL with `application_name`, both killed by the same loop.
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, application_name: app, max: 6 });
      pool.on('error', () => {});
      const url = new URL(POSTGRES_URL);
      url.searchParams.set('application_name', app);
      const borrowed = await PostgresStore.fromPool(pool, { schema: schemaA });
      const owned = await openPostgresStore(url.href, { schema: schemaB });
      const stores = [borrowed, owned];
      const ids = new Map(stores.map((s) => [s, [] as string[]]));
      const stats = {
        durationMs: DURATION_MS,
        kills: 0,
        killRounds: 0,
        ops: 0,
        succeeded: 0,
        errors: {} as Record<string, number>,
        byOp: {} as Record<string, { ok: number; failed: number }>,
      };
      const violations: string[] = [];
      let stop = false;
      const started = Date.now();
      const killer = (async () => {
        while (!stop && !process.env.SK_NO_KILL) {
          const r = await admin().query<{ n: number }>(
            `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n
           FROM pg_stat_activity WHERE application_name = $1`,
            [app],
          );
          stats.kills += r.rows[0]?.n ?? 0;
          stats.killRounds++;
          // Bursts of kills every 2–8 ms for 250 ms, then 250 ms of quiet, so the workload
          // also completes writes and every phase (connect, mid-transaction, idle) is hit.
          const inBurst = (Date.now() - started) % 500 < 250;
          await sleep(inBurst ? 2 + Math.random() * 6 : 250 - ((Date.now() - started) % 250));
        }
      })();
      const worker = async (store: PostgresStore) => {
        const mine = ids.get(store)!;
        while (!stop) {
          const op = pick(OPS);
          stats.ops++;
          stats.byOp[op] ??= { ok: 0, failed: 0 };
          const counts = stats.byOp[op];
          try {
            await runOp(store, op, mine);
            stats.succeeded++;
            counts.ok++;
          } catch (e) {
            counts.failed++;
            const code = isSessionKitError(e) ? e.code : `raw:${String((e as Error)?.message)}`;
            stats.errors[code] = (stats.errors[code] ?? 0) + 1;
            if (
              !isSessionKitError(e) ||
              (e.code !== 'unavailable' && !LEGIT[op].includes(e.code))
            ) {
              violations.push(`${op}: ${code}: ${(e as Error)?.message}`);
            }
            if (isSessionKitError(e, 'not_found') && e.sessionId) {
              const at = mine.indexOf(e.sessionId);
              if (at >= 0) mine.splice(at, 1);
            }
          }
        }
      };
      try {
        const workers = stores.flatMap((s) => Array.from({ length: 4 }, () => worker(s)));
        await sleep(DURATION_MS);
        stop = true;
        await Promise.all([killer, ...workers]);
        console.log(`[kill test] ${JSON.stringify(stats)}`);
        expect(crashes).toEqual([]);
        expect(violations.slice(0, 10)).toEqual([]);
        expect(stats.kills).toBeGreaterThan(0);
        expect(stats.errors.unavailable ?? 0).toBeGreaterThan(0);
        expect(stats.succeeded).toBeGreaterThan(0);
        // After the kills: the store works and list summaries equal the loaded sessions. A
        // termination sent in the killer's last round may still be on its way to an idle
        // pooled client: the first call can meet it (`unavailable`, the client discarded),
        // as a caller would, and is retried; later calls must not fail.
        for (const store of stores) {
          const s = await retriedOnUnavailable(() =>
            store.create({ id: newSessionId(), title: 'after', messages: [] }),
          );
          await store.commit(s.id, { append: [{ role: 'user', content: 'ok' }] });
          expect((await store.load(s.id)).messages.length).toBe(1);
          const summaries = await store.list({ includeArchived: true, limit: 1000 });
          const present = new Set(summaries.map((x) => x.id));
          for (const summary of summaries) {
            const { messages, ...header } = await store.load(summary.id);
            expect(summary).toEqual({ ...header, messageCount: messages.length });
            // No promoted child points at a deleted session.
            if (summary.parentId !== undefined) expect(present.has(summary.parentId)).toBe(true);
          }
          const report = await store.repair();
          expect(report.skippedCorrupt).toEqual([]);
          expect(report.indexEntriesFixed).toBe(0);
        }
      } finally {
        stop = true;
        process.off('uncaughtException', onCrash);
        process.off('unhandledRejection', onCrash);
        await borrowed.close();
        await owned.close();
        await pool.end();
        await dropSchema(schemaA);
        await dropSchema(schemaB);
      }
    },
    DURATION_MS + 120_000,
  );
});
