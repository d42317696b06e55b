#!/usr/bin/env node
// pnpm --filter @sessionkit/bench framework: what the framework contract's commit options
// cost on every adapter whose server answers here, the way bindings use them.
//   - pop: drop the last message of long sessions (written round robin), once with
//     `truncate: messageCount - 1` and once with `replace` carrying the kept history:
//     time per pop and bytes written per pop (the backend's own counter of what it wrote).
//   - operation ids: turns round robin over live sessions with and without an
//     `operationId`, interleaved turn by turn so that drift hits both alike.
//   --quick        smaller histories and fewer pops (about a minute)
//   --only a,b     only these backends
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { isSessionKitError } from '@sessionkit/core';
import { BACKENDS } from './backends/index.mjs';
import { median, message, sessionWithHistory, turnMessages, withStore } from './workload.mjs';

const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
});
const quick = values.quick;
const settings = {
  popSessions: quick ? 2 : 4,
  popHistory: quick ? 2000 : 10000,
  pops: quick ? 8 : 24,
  turnSessions: quick ? 10 : 40,
  turnHistory: quick ? 100 : 1000,
  turnPairs: quick ? 400 : 2000,
};
const only = values.only?.split(',').map((s) => s.trim());

/** `fn()`'s result, or `undefined` when the store refuses the commit option it uses. */
async function unlessUnsupported(fn) {
  try {
    return await fn();
  } catch (e) {
    if (isSessionKitError(e) && e.code === 'invalid_argument') return undefined;
    throw e;
  }
}

/** Pops round robin over `popSessions` sessions of `popHistory` messages, one way. */
async function pops(opened, mode) {
  const { store, writtenBytes } = opened;
  const sessions = [];
  for (let s = 0; s < settings.popSessions; s++) {
    const { id, revision } = await sessionWithHistory(store, settings.popHistory, `/pop-${s}`);
    // What a caller of `replace` must hold: the history it keeps (built, not loaded).
    const messages = Array.from({ length: settings.popHistory }, (_, i) => message(i));
    sessions.push({ id, revision, messages });
  }
  const before = (await writtenBytes?.()) ?? Number.NaN;
  const times = [];
  for (let n = 0; n < settings.pops; n++) {
    const session = sessions[n % sessions.length];
    const keep = session.messages.length - 1;
    const change =
      mode === 'truncate' ? { truncate: keep } : { replace: session.messages.slice(0, keep) };
    const started = performance.now();
    ({ revision: session.revision } = await store.commit(session.id, {
      expectedRevision: session.revision,
      ...change,
    }));
    times.push(performance.now() - started);
    session.messages.length = keep;
  }
  const after = (await writtenBytes?.()) ?? Number.NaN;
  return { ms: median(times), bytesPerPop: (after - before) / settings.pops };
}

/**
 * Time per commit over live sessions with and without an operation id, interleaved turn
 * by turn (each pair of turns takes one of each, the order alternating from pair to pair)
 * so that the machine's load, a collection or a timer tick falls on both alike: the
 * medians of the two sets and their ratio. Blocks of one kind, as measured before, let a
 * burst of load on a shared machine decide a 20 % difference either way.
 */
async function operationIdCost(store) {
  const sessions = [];
  for (let s = 0; s < settings.turnSessions; s++) {
    sessions.push(await sessionWithHistory(store, settings.turnHistory, `/turns-${s}`));
  }
  let turn = 0;
  const commitOne = async (session, withId) => {
    // The input is built before the clock starts: the store's commit is what is timed.
    // The id is what frameworks send (the OpenAI Agents SDK: a random UUID).
    const input = { expectedRevision: session.revision, append: turnMessages(turn) };
    if (withId) input.operationId = randomUUID();
    const started = performance.now();
    ({ revision: session.revision } = await store.commit(session.id, input));
    turn++;
    return performance.now() - started;
  };
  const next = () => sessions[turn % sessions.length];
  if ((await unlessUnsupported(() => commitOne(next(), true))) === undefined) return undefined;
  // Warm-up: every session's state known to the store, the JIT settled.
  for (let i = 0; i < sessions.length * 2; i++) await commitOne(next(), i % 2 === 0);
  const plain = [];
  const withIds = [];
  // Enough pairs for about two seconds of commits (an in-process store commits in tens of
  // microseconds: 2,000 pairs of those are one collection's worth), at least turnPairs.
  const probe = [];
  for (let i = 0; i < 20; i++) probe.push(await commitOne(next(), false));
  const pairs = Math.min(50_000, Math.max(settings.turnPairs, Math.ceil(1000 / median(probe))));
  for (let pair = 0; pair < pairs; pair++) {
    // Round robin puts a pair's first turn on the even sessions and its second on the odd
    // ones; which of them carries the id flips every half round, so every session takes both.
    const idFirst = Math.floor((2 * pair) / sessions.length) % 2 === 0;
    (idFirst ? withIds : plain).push(await commitOne(next(), idFirst));
    (idFirst ? plain : withIds).push(await commitOne(next(), !idFirst));
  }
  return {
    pairs,
    plainMs: median(plain),
    withIdMs: median(withIds),
    ratio: median(withIds) / median(plain),
  };
}

const f = (n, digits = 3) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
const kb = (n) => (Number.isFinite(n) ? `${(n / 1024).toFixed(1)} KiB` : '—');

console.log(
  `pop: ${settings.pops} pops round robin over ${settings.popSessions} sessions of ${settings.popHistory} messages (~1 KB each); ` +
    `operation ids: at least ${settings.turnPairs} pairs of turns (one with an id, one without; more for about 2 s of commits) over ${settings.turnSessions} sessions of ${settings.turnHistory} messages`,
);
let failed = false;
for (const backend of BACKENDS) {
  if (only && !only.includes(backend.name)) continue;
  const available = await backend.available();
  if (available !== true) {
    console.log(`${backend.name}: skipped, ${available}`);
    continue;
  }
  try {
    const truncate = await withStore(backend, (o) => unlessUnsupported(() => pops(o, 'truncate')));
    const replace = await withStore(backend, (o) => pops(o, 'replace'));
    const ids = await withStore(backend, ({ store }) => operationIdCost(store));
    const popLine = truncate
      ? `pop by truncate ${f(truncate.ms)} ms, ${kb(truncate.bytesPerPop)} written; by replace ${f(replace.ms)} ms, ${kb(replace.bytesPerPop)} written (${f(replace.ms / truncate.ms, 1)}× the time)`
      : `truncate not supported; pop by replace ${f(replace.ms)} ms, ${kb(replace.bytesPerPop)} written`;
    const idLine = ids
      ? `commit with operationId ${f(ids.withIdMs)} ms vs without ${f(ids.plainMs)} ms (${f(ids.ratio)}×, ${ids.pairs} pairs)`
      : 'operationId not supported';
    console.log(`${backend.name}: ${popLine}; ${idLine}`);
  } catch (e) {
    console.error(`${backend.name}: failed: ${e.stack ?? e.message}`);
    failed = true;
  } finally {
    await backend.end?.();
  }
}
if (failed) process.exitCode = 1;
