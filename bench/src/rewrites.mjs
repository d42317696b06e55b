// The figures of the contract's rewrite and retry additions, for any backend with a
// Committer: popping the last message of a long session with `truncate` against the same
// pop as a `replace` of the whole history (time, and the bytes the store wrote where the
// backend counts them), and a commit carrying an `operationId` against one without.
import { median, sessionWithHistory, turnMessages } from './workload.mjs';

/**
 * Median milliseconds (and bytes written, when `bytesWritten` counts them) of popping one
 * message from a session of `history` messages, `pops` times each way: `truncate` keeps
 * the first n − 1, `replace` writes the n − 1 the caller holds. Each pop is put back by an
 * untimed append, so every pop starts from `history` messages.
 */
export async function popCost(store, history, pops, bytesWritten) {
  const { id } = await sessionWithHistory(store, history, '/bench-pop');
  const messages = await store.loadMessages(id);
  const last = messages[messages.length - 1];
  const kept = messages.slice(0, -1);
  const ways = {
    truncate: () => store.commit(id, { truncate: history - 1 }),
    replace: () => store.commit(id, { replace: kept }),
  };
  const out = {};
  for (const [way, pop] of Object.entries(ways)) {
    const times = [];
    const bytes = [];
    for (let i = 0; i < pops + 1; i++) {
      const before = bytesWritten?.();
      const t = performance.now();
      await pop();
      const ms = performance.now() - t;
      const after = bytesWritten?.();
      // The first pop warms up; it is not counted.
      if (i > 0) times.push(ms);
      if (i > 0 && before !== undefined) bytes.push(after - before);
      await store.commit(id, { append: [last] });
    }
    out[way] = { ms: median(times), bytes: bytes.length > 0 ? median(bytes) : undefined };
  }
  return { history, ...out };
}

/**
 * Median milliseconds of a two-message commit with an `operationId` and without, `turns`
 * of each, interleaved on two sessions of `history` messages (so drift hits both alike,
 * and each goes first every other time), and their ratio (target ≤ 1.1).
 */
export async function operationIdCost(store, history, turns) {
  const named = await sessionWithHistory(store, history, '/bench-ops');
  const plain = await sessionWithHistory(store, history, '/bench-ops');
  const times = { with: [], without: [] };
  for (let n = 0; n < turns + 5; n++) {
    const append = turnMessages(n);
    const pair = [
      ['with', named.id],
      ['without', plain.id],
    ];
    // Which goes first alternates, so neither pays more for its place in the pair.
    if (n % 2) pair.reverse();
    for (const [kind, id] of pair) {
      const input = kind === 'with' ? { append, operationId: `turn-${n}` } : { append };
      const t = performance.now();
      await store.commit(id, input);
      if (n >= 5) times[kind].push(performance.now() - t);
    }
  }
  const withMs = median(times.with);
  const withoutMs = median(times.without);
  return { turns, withMs, withoutMs, ratio: withMs / withoutMs };
}
