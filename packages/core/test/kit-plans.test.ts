// The write plans and the shared loops of the kit.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { errorsFor, isSessionKitError } from '../src/errors.js';
import { rootLineage } from '../src/history-lineage.js';
import { LOST_RACE, retryLostRaces } from '../src/kit/lost-race.js';
import { OperationLog } from '../src/kit/operation-log.js';
import { planCommit } from '../src/kit/plans/commit.js';
import { pruneVictims } from '../src/kit/plans/prune.js';
import { planSave } from '../src/kit/plans/save.js';
import { type SessionState, storedHeaderProblem } from '../src/kit/session-state.js';
import { SessionWriteQueue } from '../src/kit/write-queue.js';
import { messageText } from '../src/session.js';

const errors = errorsFor('test');

function state(messageCount: number, revision = 3): SessionState {
  const at = new Date('2025-01-01T00:00:00.000Z');
  return {
    header: {
      id: 's',
      title: '',
      folder: '',
      createdAt: at,
      updatedAt: at,
      model: '',
      provider: '',
      tokenCount: 0,
      costUsd: 0,
      turnCount: 0,
      metadata: {},
      status: 'active',
      revision,
    },
    lineage: rootLineage(),
    messageCount,
  };
}

const codeOf = (f: () => unknown) => {
  try {
    f();
    return 'ok';
  } catch (e) {
    return isSessionKitError(e) ? e.code : String(e);
  }
};

describe('planCommit', () => {
  it('a recorded operation id replays before any check', () => {
    const recorded = { revision: 2, messageCount: 1, updatedAt: new Date(5) };
    const plan = planCommit(errors, state(4), { expectedRevision: 1, truncate: 99 }, recorded);
    expect(plan).toEqual({ replayed: true, result: recorded });
  });

  it('truncate keeps a prefix, counts a drop as a rewrite, and is checked against the count', () => {
    const plan = planCommit(errors, state(5), { truncate: 3, append: ['x'], operationId: 'op' });
    expect(plan.replayed).toBe(false);
    if (plan.replayed) return;
    expect(plan.messages).toEqual({ keep: 3, append: ['x'] });
    expect(plan.state.messageCount).toBe(4);
    expect(plan.state.lineage.rewrites).toBe(1);
    expect(plan.result).toMatchObject({ revision: 4, messageCount: 4 });
    expect(plan.operationId).toBe('op');
    const noDrop = planCommit(errors, state(5), { truncate: 5 });
    expect(!noDrop.replayed && noDrop.state.lineage.rewrites).toBe(0);
    expect(codeOf(() => planCommit(errors, state(5), { truncate: 6 }))).toBe('invalid_argument');
    expect(
      codeOf(() => planCommit(errors, state(5), { expectedMessageCount: 4, truncate: 6 })),
    ).toBe('conflict');
  });

  it('updatedAt moves strictly forward even when the clock did not', () => {
    const plan = planCommit(errors, state(0), {}, undefined, new Date('2024-01-01T00:00:00.000Z'));
    expect(!plan.replayed && plan.result.updatedAt.toISOString()).toBe('2025-01-01T00:00:00.001Z');
  });
});

describe('planSave', () => {
  it('conflicts on a stale revision and otherwise bumps it', () => {
    const session = { ...state(0).header, messages: [], children: [], revision: 2 };
    expect(codeOf(() => planSave(errors, state(0), session, true))).toBe('conflict');
    expect(planSave(errors, state(0), { ...session, revision: 3 }, false)).toMatchObject({
      header: { revision: 4 },
      lineage: { rewrites: 1 },
      messageCount: 0,
    });
  });
});

describe('the stored-header check', () => {
  it('accepts a whole header and names what is wrong with a damaged one', () => {
    expect(storedHeaderProblem('s', state(0).header)).toBeUndefined();
    expect(storedHeaderProblem('t', state(0).header)).toMatch(/another session/);
    expect(storedHeaderProblem('s', { ...state(0).header, status: 7 })).toMatch(
      /status must be a string/,
    );
    const { title: _t, ...noTitle } = state(0).header;
    expect(storedHeaderProblem('s', noTitle)).toBe('header.title is missing');
    expect(storedHeaderProblem('s', { ...state(0).header, revision: 0 })).toMatch(/revision/);
    expect(storedHeaderProblem('s', null)).toMatch(/not an object/);
  });
});

describe('pruneVictims', () => {
  it('keeps the newest max roots as list orders them', () => {
    const roots = [
      { id: 'a', updatedAt: 1 },
      { id: 'c', updatedAt: 2 },
      { id: 'b', updatedAt: 2 },
    ];
    expect(pruneVictims(roots, 1).map((r) => r.id)).toEqual(['b', 'a']);
    expect(pruneVictims(roots, 0)).toEqual([]);
  });
});

/** A small linear congruential generator: `random(n)` is in `0..n-1`, the same run each time. */
function seededRandom(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
}

/**
 * What an `OperationLog` of `capacity` must answer, as plainly as it can be said: the
 * records made, newest last, of which the last `capacity` are remembered.
 */
function operationModel(capacity: number) {
  const records: [string, number][] = [];
  return {
    record: (id: string, revision: number) => records.push([id, revision]),
    recorded: () => records.length,
    /** The revision of the newest remembered record of `id`. */
    find: (id: string) =>
      records
        .slice(-capacity)
        .filter(([r]) => r === id)
        .pop()?.[1],
    /** The remembered ids, each at its newest record, oldest first. */
    entries: () => {
      const last = records.slice(-capacity);
      return last.filter(([id], at) => !last.slice(at + 1).some(([r]) => r === id));
    },
  };
}

/** `log.entries()` as `[id, revision]` pairs, to compare with the model's. */
function revisionsOf(log: OperationLog): [string, number][] {
  return log.entries().map(([id, r]) => [id, r.revision]);
}

/**
 * One random run the way a store uses a log: a lookup of an id from a pool of
 * `2 + random(3 × capacity)`, then a record of it or (one time in four) of another id
 * first, `rounds × capacity + 16` times, every answer checked against the model; then
 * every id of the pool and the entries.
 */
function askThenRecordRun(
  random: (n: number) => number,
  log: OperationLog,
  capacity: number,
  rounds: number,
  idOf: (k: number) => string,
): void {
  const pool = 2 + random(3 * capacity);
  const model = operationModel(capacity);
  for (let i = 0; i < rounds * capacity + 16; i++) {
    const asked = idOf(random(pool));
    expect(log.find(asked)?.revision).toBe(model.find(asked));
    const order = random(4) === 0 ? [idOf(random(pool)), asked] : [asked];
    for (const id of order) {
      log.record(id, { revision: i + 1, messageCount: i, updatedAt: new Date(i) });
      model.record(id, i + 1);
    }
  }
  for (let k = 0; k < pool; k++) expect(log.find(idOf(k))?.revision).toBe(model.find(idOf(k)));
  expect(revisionsOf(log)).toEqual(model.entries());
}

describe('OperationLog', () => {
  it('remembers the last capacity ids, oldest forgotten first; results are copies', () => {
    const log = new OperationLog(2);
    const at = new Date(1);
    log.record('a', { revision: 2, messageCount: 1, updatedAt: at });
    log.record('b', { revision: 3, messageCount: 1, updatedAt: at });
    log.record('c', { revision: 4, messageCount: 1, updatedAt: at });
    expect(log.find('a')).toBeUndefined();
    expect(log.find('b')?.revision).toBe(3);
    expect(log.find('c')?.updatedAt).not.toBe(at);
    expect(log.size).toBe(2);
  });

  it('keeps the order of the last capacity ids through many wraps of its ring', () => {
    const log = new OperationLog(3);
    const result = (revision: number) => ({ revision, messageCount: 1, updatedAt: new Date(1) });
    for (let i = 0; i < 3 * 7 + 2; i++) log.record(`op-${i}`, result(i));
    expect(log.entries().map(([id, r]) => [id, r.revision])).toEqual([
      ['op-20', 20],
      ['op-21', 21],
      ['op-22', 22],
    ]);
    expect(log.find('op-19')).toBeUndefined();
    expect(log.size).toBe(3);
  });

  it('an id recorded again becomes the newest, with its new result, and stays once', () => {
    const log = new OperationLog(3);
    const result = (revision: number) => ({ revision, messageCount: 1, updatedAt: new Date(1) });
    for (const [i, id] of ['a', 'b', 'c', 'd', 'b', 'e'].entries()) log.record(id, result(i));
    expect(log.entries().map(([id, r]) => [id, r.revision])).toEqual([
      ['d', 3],
      ['b', 4],
      ['e', 5],
    ]);
    expect(log.find('b')?.revision).toBe(4);
    expect(log.find('c')).toBeUndefined();
  });

  it('an id recorded over and over keeps its newest result as its older slots are taken', () => {
    // Capacity 3: at the last record the ring holds g and d twice and the older d's slot is
    // about to be taken: d must stay found (forgetting that slot's id must not forget d).
    const log = new OperationLog(3);
    const result = (revision: number) => ({ revision, messageCount: 1, updatedAt: new Date(1) });
    for (const [i, id] of [...'fghbeaefddddgf'].entries()) log.record(id, result(i));
    expect(['d', 'g', 'f', 'e'].map((id) => log.find(id)?.revision)).toEqual([
      11,
      12,
      13,
      undefined,
    ]);
    expect(log.entries().map(([id, r]) => [id, r.revision])).toEqual([
      ['d', 11],
      ['g', 12],
      ['f', 13],
    ]);
  });

  it('answers as the last capacity records do, ids recorded twice included (random runs)', () => {
    const random = seededRandom(7);
    for (let run = 0; run < 300; run++) {
      const capacity = 1 + random(4);
      const log = new OperationLog(capacity);
      const model = operationModel(capacity);
      for (let i = 0; i < 40; i++) {
        // Few distinct ids, so that ids come back while remembered and after forgotten.
        const id = `op-${random(2 + (run % 7))}`;
        log.record(id, { revision: i, messageCount: 1, updatedAt: new Date(i) });
        model.record(id, i);
        for (let k = 0; k < 8; k++)
          expect(log.find(`op-${k}`)?.revision).toBe(model.find(`op-${k}`));
        expect(revisionsOf(log)).toEqual(model.entries());
      }
    }
  });

  it('finds exactly the newest records among many ids, through long probe runs and wraps (random runs)', () => {
    const random = seededRandom(11);
    for (let run = 0; run < 60; run++) {
      const capacity = 1 + random(48);
      const pool = capacity + 1 + random(2 * capacity);
      const log = new OperationLog(capacity);
      const model = operationModel(capacity);
      for (let i = 0; i < 10 * capacity + 20; i++) {
        const id = `id-${random(pool)}`;
        log.record(id, { revision: i + 1, messageCount: i, updatedAt: new Date(i) });
        model.record(id, i + 1);
        if (i % 7 !== 0) continue;
        for (let k = 0; k < pool; k++)
          expect(log.find(`id-${k}`)?.revision).toBe(model.find(`id-${k}`));
      }
      expect(revisionsOf(log)).toEqual(model.entries());
      expect(log.size).toBe(Math.min(capacity, model.recorded()));
    }
  });

  it('records what it was just asked about, or another id first, as a log without lookups does (random runs)', () => {
    const random = seededRandom(23);
    for (let run = 0; run < 200; run++) {
      const capacity = 1 + random(24);
      askThenRecordRun(random, new OperationLog(capacity), capacity, 8, (k) => `id-${k}`);
    }
  });

  it('ids alike in their tails and lengths: exact answers, and the log then hashes whole ids', () => {
    const log = new OperationLog(50);
    const tail = '-of-one-long-conversation-tail';
    const id = (i: number) => `${String(i).padStart(4, '0')}${tail}`;
    const result = (i: number) => ({ revision: i + 1, messageCount: i, updatedAt: new Date(i) });
    for (let i = 0; i < 3; i++) log.record(id(i), result(i));
    // Three ids alike in their last 16 chars: no probe has yet passed more than two others.
    expect(log.hashesWholeIds).toBe(false);
    for (let i = 3; i < 120; i++) log.record(id(i), result(i));
    expect(log.hashesWholeIds).toBe(true);
    for (let i = 0; i < 120; i++)
      expect(log.find(id(i))?.revision).toBe(i < 70 ? undefined : i + 1);
    expect(log.entries().map(([k]) => k)).toEqual(Array.from({ length: 50 }, (_, i) => id(70 + i)));
  });

  it('ids that differ in their tails (random UUIDs) keep being hashed by their tails', () => {
    const log = new OperationLog();
    const ids = Array.from({ length: 3_000 }, () => randomUUID());
    for (const [i, id] of ids.entries()) {
      expect(log.find(id)).toBeUndefined();
      log.record(id, { revision: i + 1, messageCount: i, updatedAt: new Date(i) });
    }
    expect(log.hashesWholeIds).toBe(false);
    expect(ids.map((id) => log.find(id)?.revision)).toEqual(
      ids.map((_, i) => (i < 2_000 ? undefined : i + 1)),
    );
  });

  it('answers as the last capacity records do while ids alike in their tails come and the hashing changes (random runs)', () => {
    const random = seededRandom(31);
    // A third of the pool alike in their last 16 chars and lengths, a third not, a third short.
    const id = (k: number) =>
      k % 3 === 0
        ? `s${k}`
        : k % 3 === 1
          ? `${String(k).padStart(5, '0')}-the-same-tail-xyz`
          : `tail-${k}-differs-${k * 7919}`;
    let switched = 0;
    for (let run = 0; run < 120; run++) {
      const capacity = 1 + random(40);
      const log = new OperationLog(capacity);
      askThenRecordRun(random, log, capacity, 6, id);
      if (log.hashesWholeIds) switched++;
    }
    // Both ways of hashing were exercised: some runs switched, some never did.
    expect(switched).toBeGreaterThan(10);
    expect(switched).toBeLessThan(120);
  });

  it('keeps results of any safe size exactly, times before 1970 included', () => {
    const log = new OperationLog(4);
    const results = [
      {
        revision: Number.MAX_SAFE_INTEGER,
        messageCount: 2 ** 40 + 3,
        updatedAt: new Date(8.64e15),
      },
      { revision: 2 ** 32, messageCount: 0, updatedAt: new Date(-62_135_596_800_000) },
      { revision: 2 ** 31, messageCount: 2 ** 32 - 1, updatedAt: new Date(-1) },
    ];
    for (const [i, r] of results.entries()) log.record(`op-${i}`, r);
    expect(results.map((_, i) => log.find(`op-${i}`))).toEqual(results);
  });

  it('at the default capacity, forgets exactly the ids older than the last 1,000 through many rebuilds of its table', () => {
    const log = new OperationLog();
    const result = (i: number) => ({ revision: i + 1, messageCount: i, updatedAt: new Date(i) });
    for (let i = 0; i < 5_500; i++) {
      // Now and then a repeat of a remembered id: found, so not recorded again (a replay).
      const id = i % 97 === 0 && i >= 500 ? `op-${i - 500}` : `op-${i}`;
      if (log.find(id) === undefined) log.record(id, result(i));
    }
    const ids = log.entries().map(([id]) => id);
    expect(ids).toHaveLength(1_000);
    expect(new Set(ids).size).toBe(1_000);
    expect(log.find('op-5499')?.revision).toBe(5_500);
    for (const [id, r] of log.entries()) expect(log.find(id)).toEqual(r);
    expect(log.find('op-4000')).toBeUndefined();
    expect(log.find('op-0')).toBeUndefined();
  });

  it('refuses a capacity that is not a whole number of ids', () => {
    for (const capacity of [-1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new OperationLog(capacity)).toThrow(RangeError);
    }
  });

  it('with capacity 0 remembers nothing', () => {
    const log = new OperationLog(0);
    log.record('a', { revision: 2, messageCount: 1, updatedAt: new Date(1) });
    expect([log.size, log.find('a'), log.entries()]).toEqual([0, undefined, []]);
  });
});

describe('retryLostRaces', () => {
  it('retries lost attempts and returns the first that did not lose', async () => {
    let n = 0;
    const out = await retryLostRaces({ errors, operation: 'commit', sessionId: 's' }, async () =>
      ++n < 4 ? LOST_RACE : 'won',
    );
    expect([out, n]).toEqual(['won', 4]);
  });

  it('gives up after maxRetries with the given error, or unavailable by default', async () => {
    let attempts = 0;
    const lose = async () => {
      attempts++;
      return LOST_RACE;
    };
    const e = await retryLostRaces(
      { errors, operation: 'commit', sessionId: 's', maxRetries: 2 },
      lose,
    ).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect(attempts).toBe(3);
    const mine = new Error('mine');
    await expect(
      retryLostRaces(
        { errors, operation: 'c', sessionId: 's', maxRetries: 0, exhausted: () => mine },
        lose,
      ),
    ).rejects.toBe(mine);
    const e2 = await retryLostRaces(
      { errors, operation: 'c', sessionId: 's', budgetMs: 0 },
      lose,
    ).catch((x: unknown) => x);
    expect(isSessionKitError(e2, 'unavailable')).toBe(true);
  });

  it('stops with aborted between attempts once the signal fired', async () => {
    const controller = new AbortController();
    const e = await retryLostRaces(
      { errors, operation: 'commit', sessionId: 's', signal: controller.signal },
      async () => {
        controller.abort();
        return LOST_RACE;
      },
    ).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'aborted')).toBe(true);
  });
});

describe('SessionWriteQueue', () => {
  it('runs one session’s writes in call order and others beside them', async () => {
    const queue = new SessionWriteQueue(errors);
    const order: string[] = [];
    const write = (name: string, ms: number) => async () => {
      order.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, ms));
      order.push(`end ${name}`);
    };
    await Promise.all([
      queue.run('s', write('a', 20)),
      queue.run('s', write('b', 1)),
      queue.run('t', write('c', 1)),
    ]);
    expect(order.indexOf('end a')).toBeLessThan(order.indexOf('start b'));
    expect(order.indexOf('start c')).toBeLessThan(order.indexOf('end a'));
    expect(queue.isBusy('s')).toBe(false);
  });

  it('a waiter past the timeout gets unavailable and never runs', async () => {
    const queue = new SessionWriteQueue(errors, 10);
    let release!: () => void;
    const held = queue.run('s', () => new Promise<void>((r) => (release = r)));
    let ran = false;
    const e = await queue
      .run('s', async () => {
        ran = true;
      })
      .catch((x: unknown) => x);
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect(ran).toBe(false);
    release();
    await held;
  });
});

describe('messageText', () => {
  it('reads text parts of parts[], content.parts[] and content[], never other parts', () => {
    expect(
      messageText({
        role: 'assistant',
        parts: [
          { type: 'text', text: 'A' },
          { type: 'reasoning', text: 'hidden' },
          { type: 'tool-x', input: { text: 'hidden' } },
          { text: 'B' },
        ],
      }),
    ).toBe('A\nB');
    expect(messageText({ content: { format: 2, parts: [{ type: 'text', text: 'C' }] } })).toBe('C');
    expect(
      messageText({
        content: [{ type: 'text', text: 'D' }, { type: 'reasoning', text: 'no' }, 'E'],
      }),
    ).toBe('D\nE');
    expect(messageText({ content: 'plain', text: 'T' })).toBe('T\nplain');
    expect(messageText('lone \uD800 half')).toBe('lone \uFFFD half');
    expect(messageText(42)).toBe('');
  });
});
