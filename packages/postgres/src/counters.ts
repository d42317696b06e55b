// Counter increments whose result leaves the counter's range: the database refuses them
// (sk_commit / sk_append report `out_of_range`, nothing written); this raises core's error.
import type { CommitInput } from '@sessionkit/core';
import { incrementedCost, incrementedCount } from '@sessionkit/core/adapter';
import { errors } from './errors.js';

/** The stored counters a refused commit reports. */
export interface StoredCounters {
  token_count: string | number | null;
  cost_usd: number | null;
  turn_count: string | number | null;
}

/**
 * Throws core's `invalid_argument` for the increment of `input` that leaves its range,
 * computed from the stored counters (after the commit's own patch, as core's
 * `applyCommitToSummary` applies them). When the counters changed meanwhile so that no
 * increment fails any more, throws a plain `invalid_argument` saying so. Nothing was
 * written either way.
 */
export function throwOutOfRange(
  id: string,
  stored: StoredCounters,
  input: CommitInput<unknown>,
): never {
  const p = input.patch ?? {};
  const inc = input.increment ?? {};
  const tokens = p.tokenCount ?? Number(stored.token_count ?? 0);
  const turns = p.turnCount ?? Number(stored.turn_count ?? 0);
  const cost = p.costUsd ?? Number(stored.cost_usd ?? 0);
  if (inc.tokenCount) incrementedCount(errors, id, 'tokenCount', tokens, inc.tokenCount);
  if (inc.turnCount) incrementedCount(errors, id, 'turnCount', turns, inc.turnCount);
  if (inc.costUsd) incrementedCost(errors, id, cost, inc.costUsd);
  throw errors.invalid(
    'commit: an increment would take a counter outside its range (the stored value changed meanwhile); nothing was written',
    id,
  );
}
