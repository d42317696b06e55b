// Durable turns across journal checkpoints (issue 29): at 3,000 live sessions written round
// robin, a 16 MiB journal file holds about 6,800 turns and covers every session's log, so
// each checkpoint fdatasyncs 3,000 logs. 16,000 turns (two checkpoints) after a warm round:
// turns per second, and the slowest commits (a commit that waits for a checkpoint shows as
// one of them). `BENCH_DIST` measures another build the same way. Asserts nothing.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fmt } from './figures.mjs';
import { storeRunner } from './pools.mjs';

/** Prints turns/s and the slowest commits over `turns` turns at `sessions` sessions. */
export async function checkpoints(root) {
  const sessions = 3000;
  const turns = Number(process.env.BENCH_CHECKPOINT_TURNS ?? 16_000);
  const dir = join(root, 'checkpoints');
  mkdirSync(dir, { recursive: true });
  const { step, close } = await storeRunner(dir, sessions, 2);
  for (let i = 0; i < sessions; i++) await step();
  const latencies = [];
  const t0 = performance.now();
  for (let i = 0; i < turns; i++) {
    const s = performance.now();
    await step();
    latencies.push(performance.now() - s);
  }
  const seconds = (performance.now() - t0) / 1000;
  await close();
  latencies.sort((a, b) => b - a);
  const over = (ms) => latencies.filter((x) => x > ms).reduce((s, x) => s + x, 0);
  console.log(`durable turns across journal checkpoints (3,000 sessions, ${fmt(turns)} turns):`);
  console.log(
    `  sync: true                                              ${fmt(turns / seconds)} turns/s`,
  );
  console.log(
    `  slowest commits                                         ${latencies
      .slice(0, 3)
      .map((x) => fmt(x))
      .join(' / ')} ms`,
  );
  console.log(
    `  time in commits over 100 ms                             ${fmt((100 * over(100)) / (seconds * 1000), 1)} %\n`,
  );
}
