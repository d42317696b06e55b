// The session router: one object holding every binding and follow target, replaced by
// compare-and-swap, so each router call is atomic against every other.
import type { RouterRow } from '@sessionkit/core';
import {
  bindingKey,
  compareRouterRows,
  followKey,
  LOST_RACE,
  nextUpdatedAt,
  retryLostRaces,
} from '@sessionkit/core/adapter';
import { FORMAT, parseJson } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { ROUTER_KEY } from './keys.js';

/** The router's data as held in memory. */
export interface RouterData {
  /** The latest binding time handed out: binding times strictly increase. */
  lastAt: number;
  bindings: Map<string, RouterRow>;
  /** `(channel, chatKey)` → target (`"tui"` or a session id). */
  follows: Map<string, { channel: string; chatKey: string; target: string }>;
}

type StoredRow = Omit<RouterRow, 'updatedAt'> & { updatedAt: number };

function fromText(text: string): RouterData {
  try {
    const raw = parseJson(text, 'router');
    const bindings = new Map<string, RouterRow>();
    for (const row of raw.bindings as StoredRow[]) {
      bindings.set(bindingKey(row.channel, row.chatKey, row.thread), {
        ...row,
        updatedAt: new Date(row.updatedAt),
      });
    }
    const follows = new Map<string, { channel: string; chatKey: string; target: string }>();
    for (const f of raw.follows as Array<{ channel: string; chatKey: string; target: string }>) {
      follows.set(followKey(f.channel, f.chatKey), f);
    }
    return { lastAt: Number(raw.lastAt) || 0, bindings, follows };
  } catch (e) {
    throw errors.make('corrupt', `the router object is unreadable: ${(e as Error).message}`);
  }
}

function toText(data: RouterData): string {
  return JSON.stringify({
    format: FORMAT,
    lastAt: data.lastAt,
    bindings: [...data.bindings.values()].map((r) => ({ ...r, updatedAt: r.updatedAt.getTime() })),
    follows: [...data.follows.values()],
  });
}

/** The router's data (empty when never written). */
export async function readRouter(ctx: StoreContext): Promise<RouterData> {
  const got = await ctx.io.get(ROUTER_KEY, 'reading the router');
  return got === undefined
    ? { lastAt: 0, bindings: new Map(), follows: new Map() }
    : fromText(got.text);
}

/**
 * Applies `change` to the router atomically (compare-and-swap, retried on lost races);
 * `change` returns false when it changed nothing, and then nothing is written.
 */
export async function updateRouter(
  ctx: StoreContext,
  change: (data: RouterData) => boolean,
): Promise<void> {
  const doing = 'updating the router';
  const exhausted = () => errors.unavailable(`${doing}: too many concurrent writers`);
  await retryLostRaces(
    { errors, operation: 'router update', sessionId: 'router', exhausted },
    async () => {
      const got = await ctx.io.get(ROUTER_KEY, doing);
      const data =
        got === undefined
          ? { lastAt: 0, bindings: new Map(), follows: new Map() }
          : fromText(got.text);
      if (!change(data)) return;
      const out = await ctx.io.put(
        ROUTER_KEY,
        toText(data),
        got === undefined ? { ifAbsent: true } : { ifMatch: got.etag },
        doing,
      );
      return out.written ? undefined : LOST_RACE;
    },
  );
}

/** The next binding time: now, or 1 ms after the latest one handed out. */
export function nextRouterTime(data: RouterData): Date {
  const at = nextUpdatedAt(data.lastAt === 0 ? undefined : new Date(data.lastAt));
  data.lastAt = at.getTime();
  return at;
}

/** Removes the bindings of session `id` and the follow targets that pin it. */
export async function dropRoutesTo(ctx: StoreContext, id: string): Promise<void> {
  await updateRouter(ctx, (data) => {
    let changed = false;
    for (const [key, row] of data.bindings) {
      if (row.sessionId === id) changed = data.bindings.delete(key) || changed;
    }
    for (const [key, f] of data.follows)
      if (f.target === id) changed = data.follows.delete(key) || changed;
    return changed;
  });
}

/** Bindings newest first, at most `limit`, caller-owned. */
export function recentRows(data: RouterData, limit: number): RouterRow[] {
  return [...data.bindings.values()]
    .sort(compareRouterRows)
    .slice(0, limit)
    .map((r) => ({ ...r, updatedAt: new Date(r.updatedAt.getTime()) }));
}
