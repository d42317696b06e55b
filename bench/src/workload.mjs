// The workload every backend runs through the public Store API, so the figures compare:
// a turn is two messages of about 1 KB appended with the revision check an application
// makes; a history is preloaded in large commits before the timed turns.
import { newSession } from '@sessionkit/core';

const FILLER = 'lorem ipsum dolor sit amet consectetur adipiscing elit '.repeat(20);

/** A fresh store of the backend for `fn`, closed afterwards. */
export async function withStore(backend, fn) {
  const opened = await backend.open();
  try {
    return await fn(opened);
  } finally {
    await opened.close();
  }
}

/** One ~1 KB message: `n` makes each distinct (search and compression see real text). */
export function message(n, role = n % 2 === 0 ? 'user' : 'assistant') {
  return { role, content: `message ${n}: ${FILLER.slice(0, 1000)}` };
}

/** The two messages of turn `n`. */
export function turnMessages(n) {
  return [message(2 * n, 'user'), message(2 * n + 1, 'assistant')];
}

/** Median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Milliseconds `fn` takes, as the median of `runs` runs after one warm-up. */
export async function medianMs(runs, fn) {
  await fn();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return median(times);
}

/** A session holding `history` messages, appended 500 at a time. */
export async function sessionWithHistory(store, history, folder = '/bench') {
  const session = await store.create(newSession({ folder, title: `history ${history}` }));
  let revision = session.revision;
  for (let done = 0; done < history; done += 500) {
    const count = Math.min(500, history - done);
    const append = Array.from({ length: count }, (_, i) => message(done + i));
    ({ revision } = await store.commit(session.id, { expectedRevision: revision, append }));
  }
  return { id: session.id, revision };
}

/**
 * Turns per second on a session already holding `history` messages: `turns` timed
 * commits (after 10 untimed), each appending two messages with `expectedRevision`.
 */
export async function turnRate(store, history, turns) {
  let { id, revision } = await sessionWithHistory(store, history);
  const commit = async (n) => {
    ({ revision } = await store.commit(id, {
      expectedRevision: revision,
      append: turnMessages(n),
      increment: { turnCount: 1, tokenCount: 512 },
    }));
  };
  for (let n = 0; n < 10; n++) await commit(n);
  const started = performance.now();
  for (let n = 10; n < 10 + turns; n++) await commit(n);
  return (turns * 1000) / (performance.now() - started);
}

/** The same count of raw turns from a backend's `prepare(history)`, per second. */
export async function rawRate(prepare, history, turns) {
  const raw = await prepare(history);
  try {
    for (let n = 0; n < 10; n++) await raw.turn(turnMessages(n));
    const started = performance.now();
    for (let n = 10; n < 10 + turns; n++) await raw.turn(turnMessages(n));
    return (turns * 1000) / (performance.now() - started);
  } finally {
    await raw.close?.();
  }
}

/** Load of a long session beside JSON.parse of the same messages' bytes (medians, ms). */
export async function loadVsParse(store, history) {
  const { id } = await sessionWithHistory(store, history, '/bench-load');
  const loaded = await store.load(id);
  const bytes = JSON.stringify(loaded.messages);
  const loadMs = await medianMs(5, () => store.load(id));
  const parseMs = await medianMs(5, () => JSON.parse(bytes));
  return { history, megabytes: bytes.length / 2 ** 20, loadMs, parseMs };
}

/** `count` sessions created `concurrency` at a time, then the median of 20 `list({limit: 20})`. */
export async function list20(store, count, concurrency = 50) {
  for (let done = 0; done < count; done += concurrency) {
    const batch = Math.min(concurrency, count - done);
    await Promise.all(
      Array.from({ length: batch }, (_, i) =>
        store.create(newSession({ folder: '/bench-list', title: `session ${done + i}` })),
      ),
    );
  }
  const ms = await medianMs(20, () => store.list({ limit: 20 }));
  return { sessions: count, ms };
}

/** A conversation of `turns` turns on an otherwise empty store, and its message bytes. */
export async function conversation(store, turns) {
  const session = await store.create(newSession({ folder: '/bench-bytes', title: 'bytes' }));
  let revision = session.revision;
  let jsonBytes = 0;
  for (let n = 0; n < turns; n++) {
    const append = turnMessages(n);
    jsonBytes += append.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
    ({ revision } = await store.commit(session.id, { expectedRevision: revision, append }));
  }
  return { id: session.id, messages: 2 * turns, jsonBytes };
}
