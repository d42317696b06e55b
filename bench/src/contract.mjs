#!/usr/bin/env node
// pnpm --filter @sessionkit/bench bench:contract [--only file] [--quick]: the commit
// contract's costs per backend (issue 25 item 5), through the public API:
// - a pop of one message from a 10,000-message session, `truncate` against `replace` (the
//   whole history minus one, as a caller holding it would send it): median time, and the
//   bytes the process handed to write calls during the commit (`wchar` of /proc/self/io,
//   Linux only; a server backend's own writes are not in it);
// - a commit of one turn with an `operationId` against one without, interleaved in rounds
//   (median per commit; target ≤ 1.1×).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BACKENDS } from './backends/index.mjs';
import { median, message, sessionWithHistory, turnMessages } from './workload.mjs';

const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
});
const only = values.only?.split(',').map((s) => s.trim());
const history = values.quick ? 2000 : 10_000;
const pops = values.quick ? 10 : 30;
const rounds = values.quick ? 5 : 15;
const perRound = 20;

/** Bytes this process has passed to write calls so far; `undefined` off Linux. */
function written() {
  try {
    return Number(/wchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
}

/** Median time and bytes written of `pop()`, each followed by an untimed `refill()`. */
async function timedPops(pop, refill) {
  const times = [];
  const bytes = [];
  for (let i = 0; i < pops + 1; i++) {
    const w = written();
    const t = performance.now();
    await pop();
    const ms = performance.now() - t;
    const after = written();
    if (i > 0) {
      times.push(ms);
      if (w !== undefined && after !== undefined) bytes.push(after - w);
    }
    await refill();
  }
  return { ms: median(times), bytes: bytes.length > 0 ? median(bytes) : undefined };
}

/** Pops of one message by `truncate` and by `replace` on a `history`-message session. */
async function popCosts(store) {
  const s = await sessionWithHistory(store, history);
  const messages = await store.loadMessages(s.id);
  let n = history;
  const refill = async () => {
    const m = message(n++);
    await store.commit(s.id, { append: [m] });
    messages.push(m);
  };
  const truncate = await timedPops(async () => {
    await store.commit(s.id, { expectedMessageCount: messages.length, truncate: history - 1 });
    messages.pop();
  }, refill);
  const replace = await timedPops(async () => {
    messages.pop();
    await store.commit(s.id, { replace: messages });
  }, refill);
  return { truncate, replace };
}

/** Median commit time with and without an operation id, interleaved in rounds. */
async function operationCost(store) {
  const s = await sessionWithHistory(store, 10);
  const times = { with: [], without: [] };
  let n = 0;
  const turn = async (named) => {
    const t = performance.now();
    await store.commit(s.id, {
      append: turnMessages(n),
      operationId: named ? `turn-${n}` : undefined,
      increment: { turnCount: 1 },
    });
    (named ? times.with : times.without).push(performance.now() - t);
    n++;
  };
  for (let i = 0; i < 10; i++) await turn(i % 2 === 0); // warm-up
  times.with.length = 0;
  times.without.length = 0;
  for (let r = 0; r < rounds; r++) {
    const first = r % 2 === 0;
    for (let i = 0; i < perRound; i++) await turn(first);
    for (let i = 0; i < perRound; i++) await turn(!first);
  }
  return { withMs: median(times.with), withoutMs: median(times.without) };
}

const fmt = (ms) => `${ms.toFixed(3)} ms`;
const kib = (b) => (b === undefined ? '—' : `${(b / 1024).toFixed(1)} KiB`);
for (const backend of BACKENDS) {
  if (only && !only.includes(backend.name)) continue;
  const available = await backend.available();
  if (available !== true) {
    console.log(`${backend.name}: skipped, ${available}`);
    continue;
  }
  const opened = await backend.open();
  try {
    const pop = await popCosts(opened.store);
    const op = await operationCost(opened.store);
    console.log(
      `${backend.name}: pop 1 of ${history}: truncate ${fmt(pop.truncate.ms)}, ${kib(pop.truncate.bytes)} written; replace ${fmt(pop.replace.ms)}, ${kib(pop.replace.bytes)} written (${(pop.replace.ms / pop.truncate.ms).toFixed(1)}× the time)`,
    );
    console.log(
      `${backend.name}: commit with operationId ${fmt(op.withMs)} / without ${fmt(op.withoutMs)} = ${(op.withMs / op.withoutMs).toFixed(3)}× (target ≤ 1.1×)`,
    );
  } finally {
    await opened.close();
    await backend.end?.();
  }
}
