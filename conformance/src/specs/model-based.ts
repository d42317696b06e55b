import { randomBytes } from 'node:crypto';
import type { FullStore, Store } from '@sessionkit/core';
import fc from 'fast-check';
import { defineSpec } from '../harness.js';
import { type Operation, operationArb } from '../model/operations.js';
import { runSequence } from '../model/run-sequence.js';

/** Default number of random sequences per run: bounded so the whole suite stays fast. */
export const DEFAULT_MODEL_RUNS = 25;
/** Longest random sequence. */
export const MAX_MODEL_OPERATIONS = 30;

/**
 * The model-based run's settings: `SESSIONKIT_MODEL_SEED` replays a reported failure,
 * `SESSIONKIT_MODEL_RUNS` sets how many sequences run (the CLI's `--seed` and `--runs`).
 */
export function modelSettings(env: Record<string, string | undefined> = process.env): {
  seed: number;
  runs: number;
} {
  const parse = (name: string, value: string | undefined, fallback: number): number => {
    if (value === undefined || value === '') return fallback;
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got "${value}"`);
    return n;
  };
  const seed = parse('SESSIONKIT_MODEL_SEED', env.SESSIONKIT_MODEL_SEED, randomSeed());
  const runs = parse('SESSIONKIT_MODEL_RUNS', env.SESSIONKIT_MODEL_RUNS, DEFAULT_MODEL_RUNS);
  if (runs < 1) throw new Error(`SESSIONKIT_MODEL_RUNS must be at least 1, got ${runs}`);
  return { seed, runs };
}

function randomSeed(): number {
  return randomBytes(4).readInt32LE(0);
}

/**
 * Model-based: random sequences of every operation of every capability the store has
 * (create, load, save, commit, delete, list, branch, clone, merge, windows, runtime
 * status, events, the router, enforceMax), each run on a fresh store and on the suite's
 * reference model of DESIGN, comparing every result and error code. A failure is shrunk
 * to a short sequence and reported with its seed.
 */
export const modelBasedSpec = defineSpec('model', 'Store', (t) => {
  t.test(
    'random operation sequences agree with the reference model',
    async (ctx) => {
      const { seed, runs } = modelSettings();
      let run = 0;
      const property = fc.asyncProperty(
        fc.array(operationArb, { minLength: 1, maxLength: MAX_MODEL_OPERATIONS }),
        async (ops: Operation[]) => {
          const store: Store = await ctx.init.create();
          try {
            await runSequence(
              store as FullStore,
              ops,
              `m${run++}-${randomBytes(3).toString('hex')}`,
            );
          } finally {
            await store.close().catch(() => {});
            if (ctx.init.destroy) await Promise.resolve(ctx.init.destroy(store)).catch(() => {});
          }
        },
      );
      const result = await fc.check(property, { seed, numRuns: runs });
      if (!result.failed) return;
      const shrunk = JSON.stringify(result.counterexample?.[0] ?? null);
      const cause =
        result.errorInstance instanceof Error
          ? result.errorInstance.message
          : String(result.errorInstance);
      throw new Error(
        `a sequence of ${result.counterexample?.[0]?.length ?? '?'} operations disagrees with the model ` +
          `(seed ${seed}, after ${result.numRuns} runs, shrunk ${result.numShrinks} times).\n` +
          `First mismatch: ${cause.slice(0, 1500)}\n` +
          `Sequence: ${shrunk.slice(0, 3000)}\n` +
          `Replay: SESSIONKIT_MODEL_SEED=${seed} (CLI: --spec model --seed ${seed} --runs ${result.numRuns})`,
      );
    },
    { timeoutFactor: 10 },
  );
});
