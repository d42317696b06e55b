#!/usr/bin/env node
// What instrumentStore costs a memory-store commit, the cheapest store call there is (so
// the worst case for a wrapper), with no OpenTelemetry SDK registered: the promise is at
// most 5 % over the plain store.
//
//   node bench/overhead.mjs [rounds] [commitsPerRound]
//
// Contenders take turns commit by commit (the order rotating), each on a session of its
// own, so the load of other processes falls on all of them alike. A round is
// `commitsPerRound` turns each; a contender's time in a round is the median of its commit
// times (a commit that a context switch hit does not count), and its figure is the median
// over rounds of that time divided by the plain store's in the same round. A second plain
// store is a control: its figure is the noise of the method. No forced garbage
// collection: a full collection between rounds makes V8 re-tune code and distorts small
// differences.
//
// A second run, for information only, compares the plain store with an SDK registered:
// a sampler that drops every span, and every span recorded into an in-memory exporter.
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { MemoryStore } from '@sessionkit/memory';
import { instrumentStore } from '@sessionkit/otel';

const rounds = Number(process.argv[2] ?? 200);
const commitsPerRound = Number(process.argv[3] ?? 200);
const turn = [
  { role: 'user', content: 'Why does the parser drop comments?' },
  { role: 'assistant', content: 'Because the lexer skips them; keep them as trivia.' },
];

let sessions = 0;
/** One round: per contender, the median time of its `commitsPerRound` commits, in ms. */
async function round(contenders) {
  const ids = contenders.map(() => `bench-${sessions++}`);
  for (const [i, c] of contenders.entries()) await c.store.create({ id: ids[i] });
  const times = contenders.map(() => []);
  for (let k = 0; k < commitsPerRound; k++) {
    for (let j = 0; j < contenders.length; j++) {
      const i = (j + k) % contenders.length;
      const started = performance.now();
      await contenders[i].store.commit(ids[i], { append: turn });
      times[i].push(performance.now() - started);
    }
  }
  for (const [i, c] of contenders.entries()) await c.store.delete(ids[i]);
  return times.map(median);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))];
const percent = (ratio) => `${((ratio - 1) * 100).toFixed(1)} %`;

/** Runs the rounds and prints each contender's time and ratio; returns the median ratios. */
async function compare(title, contenders, after = () => {}) {
  for (let r = 0; r < 20; r++) {
    await round(contenders); // warm-up: every path optimised first
    after();
  }
  const results = [];
  for (let r = 0; r < rounds; r++) {
    results.push(await round(contenders));
    after();
  }
  console.log(title);
  const ratios = [];
  for (const [i, c] of contenders.entries()) {
    const ns = median(results.map((spent) => spent[i])) * 1e6;
    const perRound = results.map((spent) => spent[i] / spent[0]);
    ratios.push(median(perRound));
    const spread = `middle half of rounds ${percent(quantile(perRound, 0.25))} … ${percent(quantile(perRound, 0.75))}`;
    console.log(
      `  ${c.name.padEnd(40)} ${ns.toFixed(0).padStart(6)} ns/commit${i === 0 ? '' : `  ${percent(ratios[i]).padStart(7)} (${spread})`}`,
    );
  }
  for (const c of contenders) await c.store.close();
  return ratios;
}

console.log(
  `memory-store commits of one turn (2 messages): ${rounds} rounds of ${commitsPerRound} commits per contender, interleaved`,
);
const [, , noSdk] = await compare('no SDK registered', [
  { name: 'plain memory store', store: new MemoryStore() },
  { name: 'plain memory store (control)', store: new MemoryStore() },
  { name: 'instrumented', store: instrumentStore(new MemoryStore()) },
]);

const exporter = new InMemorySpanExporter();
await compare(
  'with an SDK (for information)',
  [
    { name: 'plain memory store', store: new MemoryStore() },
    {
      name: 'instrumented, sampler drops every span',
      store: instrumentStore(new MemoryStore(), {
        tracerProvider: new BasicTracerProvider({ sampler: new AlwaysOffSampler() }),
        meterProvider: new MeterProvider(),
      }),
    },
    {
      name: 'instrumented, every span recorded',
      store: instrumentStore(new MemoryStore(), {
        tracerProvider: new BasicTracerProvider({
          spanProcessors: [new SimpleSpanProcessor(exporter)],
        }),
        meterProvider: new MeterProvider(),
      }),
    },
  ],
  () => exporter.reset(),
);

const kept = noSdk <= 1.05;
console.log(
  `instrumented with no SDK: ${percent(noSdk)} over plain (promise: at most 5 %): ${kept ? 'kept' : 'NOT KEPT'}`,
);
process.exitCode = kept ? 0 : 1;
