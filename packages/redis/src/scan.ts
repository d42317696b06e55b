// SCAN over every master (all of a Cluster's, or the one standalone server). Used only by
// repair() and by tests; no other code path enumerates keys.
import type { Redis } from 'ioredis';
import { command } from './calls.js';
import type { StoreContext } from './context.js';

/** Keys matching `pattern` on every master, each once. */
export async function scanKeys(ctx: StoreContext, pattern: string): Promise<string[]> {
  const found = new Set<string>();
  const nodes: Redis[] = ctx.cluster
    ? (ctx.client as import('ioredis').Cluster).nodes('master')
    : [ctx.client as Redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const step = cursor;
      const [next, keys] = await command(ctx, 'scanning keys', () =>
        node.scan(step, 'MATCH', pattern, 'COUNT', 1000),
      );
      for (const key of keys) found.add(key);
      cursor = next;
    } while (cursor !== '0');
  }
  return [...found];
}

/**
 * `[member, score]` pairs of a WITHSCORES reply, which ioredis gives either flat
 * (`[m1, s1, m2, s2]`) or as pairs (`[[m1, s1], …]`) depending on the version.
 */
export function scorePairs(reply: unknown): [string, number][] {
  const list = reply as unknown[];
  const out: [string, number][] = [];
  if (list.length > 0 && Array.isArray(list[0])) {
    for (const pair of list as [string, string][]) out.push([String(pair[0]), Number(pair[1])]);
    return out;
  }
  for (let i = 0; i + 1 < list.length; i += 2) out.push([String(list[i]), Number(list[i + 1])]);
  return out;
}
