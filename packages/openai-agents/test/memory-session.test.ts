// SessionKitSession checked against the SDK's own MemorySession: random sequences of the
// Session methods, history transactions and mutations, run op by op on both, every
// result and the whole history after every op compared.
import { MemorySession } from '@openai/agents-core';
import fc from 'fast-check';
import { afterAll, expect, it } from 'vitest';
import { asStored, userText } from './support/items.js';
import { describeOnBackends } from './support/per-backend.js';
import { OpRunner, outcomeOf, sessionOp } from './support/session-ops.js';

// Sequences per backend: more on the in-process store, fewer where every op is a round
// trip (the whole package stays within a couple of minutes on a loaded machine). s3rver
// answers each request in milliseconds, and a sequence on it makes up to 90 requests, so
// it runs fewer and gets a longer limit: under CI's load 25 sequences passed 60 s.
const RUNS: Record<string, number> = { memory: 150, file: 40, postgres: 40, redis: 40, s3: 15 };
const LIMIT_MS = 240_000;
const compared: Record<string, { sequences: number; ops: number; threw: number }> = {};

afterAll(() => {
  for (const [name, c] of Object.entries(compared)) {
    console.log(
      `[openai-agents] ${name}: ${c.sequences} sequences, ${c.ops} ops compared with MemorySession (${c.threw} rejected by both)`,
    );
  }
});

describeOnBackends('op by op against MemorySession', (ctx) => {
  ctx.requiresHistoryWrites();

  it(
    'every result and every history equal those of MemorySession',
    async () => {
      const tally = { sequences: 0, ops: 0, threw: 0 };
      compared[ctx.name] = tally;
      await fc.assert(
        fc.asyncProperty(
          fc.array(sessionOp, { minLength: 1, maxLength: 30, size: 'max' }),
          async (ops) => {
            const reference = new MemorySession();
            const session = ctx.session();
            const runner = new OpRunner();
            for (const [step, op] of ops.entries()) {
              const call = await runner.prepare(op, reference);
              const expected = await outcomeOf(() => call(reference));
              const actual = await outcomeOf(() => call(session));
              expect(actual, `step ${step}: ${op.kind}`).toEqual(expected);
              expect(await session.getItems(), `history after step ${step}`).toEqual(
                asStored(await reference.getItems()),
              );
              tally.ops++;
              if ('threw' in expected) tally.threw++;
            }
            tally.sequences++;
          },
        ),
        { numRuns: RUNS[ctx.name] ?? 15 },
      );
    },
    LIMIT_MS,
  );

  // MemorySession.clearSession forgets the operation ids it applied, so a transaction
  // retried after a clear is applied again there. The contract is that a repeat writes
  // nothing, so SessionKitSession remembers them across a clear (see the README).
  it('remembers operation ids across clearSession, where MemorySession forgets them', async () => {
    const turn = {
      operationId: 'turn-1',
      transaction: { type: 'append_items' as const, items: [userText('once')] },
    };
    const reference = new MemorySession();
    const session = ctx.session();
    for (const s of [reference, session]) {
      await s.applyHistoryTransaction(structuredClone(turn));
      await s.clearSession();
      await s.applyHistoryTransaction(structuredClone(turn));
    }
    expect(await reference.getItems()).toEqual([userText('once')]);
    expect(await session.getItems()).toEqual([]);
  });
});
