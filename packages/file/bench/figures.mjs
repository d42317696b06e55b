// Figures of the benchmark scripts: rates, interleaved rounds, medians, numbers as printed.
import { performance } from 'node:perf_hooks';

/** The median of `xs`. */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** `n` with thousands separators and `d` decimals. */
export const fmt = (n, d = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Steps per second of `n` sequential `step(i)` calls (a step may return a promise). */
export async function rate(n, step) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await step(i);
  return (n * 1000) / (performance.now() - t0);
}

/**
 * Measures `runners` ({ step, close } by name) interleaved: `rounds` chunks of `chunk`
 * sequential steps each, so a burst of load from another tenant hits all of them alike;
 * then closes them. `median(name)` of its rates, `ratio(a, b)` the median per-round ratio.
 */
export async function interleaved(runners, rounds, chunk) {
  const rates = Object.fromEntries(Object.keys(runners).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++)
    for (const [name, runner] of Object.entries(runners))
      rates[name].push(await rate(chunk, runner.step));
  for (const runner of Object.values(runners)) await runner.close();
  return {
    median: (k) => median(rates[k]),
    ratio: (a, b) => median(rates[a].map((x, i) => x / rates[b][i])),
  };
}
