// The cost of the contract's newer commit options, through the public API: popping the last
// message of a long session with `truncate` against rewriting it with `replace` (bytes
// written and time), and a turn naming an `operationId` against the same turn without.
import { median, message, sessionWithHistory, turnMessages } from './workload.mjs';

/**
 * Pops one message from a session of `history` messages, `pops` times each way: `truncate:
 * n - 1`, then `replace` with the first n - 1 messages (what an application without
 * truncate sends). `written()` (optional) reads the backend's bytes written so far; the
 * figure per pop is the least of the pops (other writers on a shared server only add).
 */
export async function popCost(store, { history, pops, written }) {
  const { id } = await sessionWithHistory(store, history);
  const measure = async (pop) => {
    const times = [];
    const bytes = [];
    for (let i = 0; i < pops; i++) {
      const before = written ? await written() : 0;
      const t = performance.now();
      await pop();
      times.push(performance.now() - t);
      if (written) bytes.push((await written()) - before);
      // Back to `history` messages, so every pop starts from the same session.
      const { messageCount } = await store.loadMessageWindow(id, { last: 0 });
      await store.commit(id, { append: [message(messageCount)] });
    }
    return { ms: median(times), bytes: written ? Math.min(...bytes) : undefined };
  };
  const truncate = await measure(async () => {
    const { messageCount } = await store.loadMessageWindow(id, { last: 0 });
    await store.commit(id, { truncate: messageCount - 1 });
  });
  const replace = await measure(async () => {
    const messages = await store.loadMessages(id);
    await store.commit(id, { replace: messages.slice(0, -1) });
  });
  return { history, truncate, replace };
}

/**
 * Turns per second with and without an `operationId` on a session of `history` messages,
 * in alternating rounds of `round` turns (so both see the same server load); the ratio is
 * the time with ids over the time without.
 */
export async function operationIdCost(store, { history, turns, round = 50 }) {
  let { id, revision } = await sessionWithHistory(store, history);
  let n = 0;
  const run = async (named) => {
    const started = performance.now();
    for (let i = 0; i < round; i++, n++) {
      const input = { expectedRevision: revision, append: turnMessages(n) };
      if (named) input.operationId = `turn-${n}`;
      ({ revision } = await store.commit(id, input));
    }
    return performance.now() - started;
  };
  await run(false);
  await run(true);
  let plainMs = 0;
  let namedMs = 0;
  for (let done = 0; done < turns; done += round) {
    plainMs += await run(false);
    namedMs += await run(true);
  }
  const counted = Math.ceil(turns / round) * round;
  return {
    history,
    plainPerSec: (counted * 1000) / plainMs,
    namedPerSec: (counted * 1000) / namedMs,
    ratio: namedMs / plainMs,
  };
}
