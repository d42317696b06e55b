// repair(): the index rebuilt from the sessions' own keys, found with SCAN. Every fix is
// conditional or monotonic, so it is safe while other processes write: an order entry
// only moves forward (or is corrected from the exact score it was seen with), links of
// creates still in progress are left alone.
import type { RepairReport } from '@sessionkit/core';
import { IN_FLIGHT_WRITE_GRACE_MS, searchTextsOf } from '@sessionkit/core/adapter';
import { call, command } from './calls.js';
import { decodeMessages } from './codec.js';
import type { StoreContext } from './context.js';
import { SCRIPTS } from './lua/index.js';
import { FORMAT } from './lua/index-scripts.js';
import { readSnapshot } from './reads.js';
import { scanKeys, scorePairs } from './scan.js';
import { readStateDetail, type VersionedState } from './session-io.js';

/** What the sessions' own keys say the index should hold. */
interface Truth {
  order: Map<string, number>;
  /** Filter index key → id → score. */
  filters: Map<string, Map<string, number>>;
  children: Map<string, Set<string>>;
  /** Ids that exist (readable or not). */
  present: Set<string>;
  /**
   * Readable sessions whose search texts are lost (evicted, deleted by hand) or of the
   * previous release's format, with the state they were read at.
   */
  textless: Map<string, VersionedState>;
  skippedCorrupt: RepairReport['skippedCorrupt'];
}

/**
 * Rebuilds the listing order, filter indexes, children sets, pending marks and the search texts that are
 * missing or of the previous release's format; reports what it did.
 */
export async function rebuildIndex(ctx: StoreContext): Promise<RepairReport> {
  const truth = await readTruth(ctx);
  const pending = await pendingSince(ctx);
  const inProgress = new Set(
    [...pending]
      .filter(([, since]) => Date.now() - since < IN_FLIGHT_WRITE_GRACE_MS)
      .map(([id]) => id),
  );
  let fixed = await repairOrder(ctx, truth, inProgress);
  fixed += await repairFilterIndexes(ctx, truth, inProgress);
  fixed += await repairChildren(ctx, truth, inProgress);
  fixed += await restoreSearchTexts(ctx, truth);
  for (const [id, since] of pending) {
    if (truth.present.has(id) || Date.now() - since >= IN_FLIGHT_WRITE_GRACE_MS) {
      fixed += await call<number>(
        ctx,
        SCRIPTS.indexUnpend,
        [ctx.keys.pending],
        [id],
        'repairing the index',
      );
    }
  }
  return {
    rebuilt: truth.order.size,
    skippedCorrupt: truth.skippedCorrupt,
    indexEntriesFixed: fixed,
  };
}

async function readTruth(ctx: StoreContext): Promise<Truth> {
  const ids = (await scanKeys(ctx, ctx.keys.metaPattern))
    .map((key) => ctx.keys.idOfMetaKey(key))
    .filter((id): id is string => id !== undefined);
  const truth: Truth = {
    order: new Map(),
    filters: new Map(),
    children: new Map(),
    present: new Set(),
    textless: new Map(),
    skippedCorrupt: [],
  };
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const states = await Promise.all(
      chunk.map((id) => readStateDetail(ctx, id).catch((e: unknown) => e)),
    );
    chunk.forEach((id, j) => {
      const state = states[j];
      if (state === undefined) return; // deleted since the scan
      truth.present.add(id);
      if (state instanceof Error) {
        if ((state as { code?: unknown }).code !== 'corrupt') throw state;
        truth.skippedCorrupt.push({ id, reason: state.message });
        return;
      }
      const read = state as NonNullable<Awaited<ReturnType<typeof readStateDetail>>>;
      const { header } = read.state;
      if (!read.searchCurrent) truth.textless.set(id, read.state);
      truth.order.set(id, header.updatedAt.getTime());
      for (const key of ctx.keys.filterIndexesOf(header)) {
        const entries = truth.filters.get(key) ?? new Map<string, number>();
        truth.filters.set(key, entries.set(id, header.updatedAt.getTime()));
      }
      if (header.parentId !== undefined) {
        const set = truth.children.get(header.parentId) ?? new Set();
        truth.children.set(header.parentId, set.add(id));
      }
    });
  }
  return truth;
}

/**
 * Search texts lost (evicted, deleted by hand) make `list({ query })` miss the session, and
 * the previous release's single search text did not read message parts: each is rebuilt
 * from the messages, and stored only if the session has not been written since it was
 * read (a write in between keeps the texts it wrote; the next repair looks again).
 */
async function restoreSearchTexts(ctx: StoreContext, truth: Truth): Promise<number> {
  let fixed = 0;
  for (const [id, state] of truth.textless) {
    try {
      fixed += await rebuildSearchTexts(ctx, id, state);
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'corrupt') throw e;
      truth.skippedCorrupt.push({ id, reason: (e as Error).message });
    }
  }
  return fixed;
}

/**
 * Rebuilds the search texts of `id` from its messages if it is still at `state`'s life and
 * version; 1 when stored, 0 when the session moved or is gone. Throws `corrupt`.
 */
export async function rebuildSearchTexts(
  ctx: StoreContext,
  id: string,
  state: Pick<VersionedState, 'life' | 'version'>,
): Promise<number> {
  let snapshot: Awaited<ReturnType<typeof readSnapshot>>;
  try {
    snapshot = await readSnapshot(ctx, id, 0, -1);
  } catch (e) {
    if ((e as { code?: unknown }).code === 'not_found') return 0; // deleted meanwhile
    throw e;
  }
  if (snapshot.version !== state.version || snapshot.life !== state.life) return 0;
  const texts = searchTextsOf(decodeMessages(id, snapshot.messageTexts));
  const stored = await call<number>(
    ctx,
    SCRIPTS.rebuildText,
    ctx.keys.sessionKeyList(id),
    [snapshot.life, snapshot.version, ...texts],
    'repairing the search text',
  );
  return Number(stored);
}

/**
 * The upgrade from the previous releases, run by the first call of a store: unless the
 * store's format key says it is done (or the store holds no session yet), every session
 * gets its entries in the filter indexes of its folder, status and parent (format 2 had
 * none), and one whose search data is of format 1 (one lower-cased string that did not
 * read message parts) gets its per-message search texts rebuilt from its messages, then
 * the format key is set. Safe to run from several processes at once (each rebuild is
 * conditional on the version it read); a session it cannot read (corrupt) is left to
 * `repair()`. A rebuild that lost a race with a write is tried again from a fresh read; a
 * session still not rebuilt after that, or any other failure (thrown: the next call
 * runs the upgrade again), leaves the format key unset, so the store is marked upgraded
 * only when every readable session is of this release's format.
 */
export async function upgradeStore(ctx: StoreContext): Promise<void> {
  const k = ctx.keys;
  const done = await call<number>(
    ctx,
    SCRIPTS.formatCheck,
    [k.format, k.order, k.pending],
    [],
    'opening the store',
  );
  if (Number(done) === 1) return;
  const ids = (await scanKeys(ctx, k.metaPattern))
    .map((key) => k.idOfMetaKey(key))
    .filter((id): id is string => id !== undefined);
  let complete = true;
  for (let i = 0; i < ids.length; i += UPGRADE_CHUNK) {
    const done = await Promise.all(
      ids.slice(i, i + UPGRADE_CHUNK).map((id) => upgradeSession(ctx, id)),
    );
    if (done.includes(false)) complete = false;
  }
  if (complete) await command(ctx, 'opening the store', () => ctx.client.set(k.format, FORMAT));
}

/** Sessions the upgrade brings up at once. */
const UPGRADE_CHUNK = 200;

/** Rebuilds tried for one session whose rebuild keeps losing races with writes. */
const UPGRADE_ATTEMPTS = 3;

/**
 * Brings one session to this release's format: its entries in its filter indexes (moved
 * forward only: a write since the read keeps its own), and its search texts rebuilt when
 * they are of the format before. True when it is (or the session is gone or corrupt:
 * `repair()` reports it), false when writes kept moving it.
 */
async function upgradeSession(ctx: StoreContext, id: string): Promise<boolean> {
  for (let attempt = 0; attempt < UPGRADE_ATTEMPTS; attempt++) {
    try {
      const read = await readStateDetail(ctx, id);
      if (read === undefined) return true;
      const { header } = read.state;
      if (attempt === 0) {
        const filters = ctx.keys.filterIndexesOf(header);
        await ctx.orderWrites.set(id, header.updatedAt.getTime(), filters);
      }
      if (read.searchCurrent) return true;
      if (Number(await rebuildSearchTexts(ctx, id, read.state)) === 1) return true;
    } catch (e) {
      if ((e as { code?: unknown }).code === 'corrupt') return true;
      throw e;
    }
  }
  return false;
}

async function pendingSince(ctx: StoreContext): Promise<Map<string, number>> {
  const reply = await redis(ctx, () =>
    ctx.client.zrange(ctx.keys.pending, '0', '-1', 'WITHSCORES'),
  );
  return new Map(scorePairs(reply));
}

async function repairOrder(
  ctx: StoreContext,
  truth: Truth,
  inProgress: Set<string>,
): Promise<number> {
  const reply = await redis(ctx, () => ctx.client.zrange(ctx.keys.order, '0', '-1', 'WITHSCORES'));
  const actual = new Map(scorePairs(reply));
  let fixed = 0;
  for (const [id, score] of truth.order) {
    const seen = actual.get(id);
    if (seen === score) continue;
    const script = seen === undefined || seen < score ? SCRIPTS.indexSet : SCRIPTS.indexHeal;
    const args = script === SCRIPTS.indexSet ? [score, id] : [id, seen as number, score];
    fixed += await call<number>(ctx, script, [ctx.keys.order], args, 'repairing the index');
  }
  for (const [id, score] of actual) {
    if (truth.present.has(id)) continue; // a readable one was handled above; a corrupt one is left as it is
    if (inProgress.has(id)) continue; // a create still writing its session
    fixed += await call<number>(
      ctx,
      SCRIPTS.indexDrop,
      [ctx.keys.order, ctx.keys.pending],
      [id, score],
      'repairing the index',
    );
  }
  return fixed;
}

/**
 * Every filter index holds exactly the readable sessions of its value at their scores;
 * entries of unreadable sessions and of creates in progress are left as they are. Each
 * fix is conditional on the score seen, or moves an entry forward only.
 */
async function repairFilterIndexes(
  ctx: StoreContext,
  truth: Truth,
  inProgress: Set<string>,
): Promise<number> {
  const found: string[] = [];
  for (const pattern of ctx.keys.filterIndexPatterns) found.push(...(await scanKeys(ctx, pattern)));
  const corrupt = new Set(truth.skippedCorrupt.map((c) => c.id));
  let fixed = 0;
  for (const key of new Set([...found, ...truth.filters.keys()])) {
    const reply = await redis(ctx, () => ctx.client.zrange(key, '0', '-1', 'WITHSCORES'));
    const actual = new Map(scorePairs(reply));
    const want = truth.filters.get(key) ?? new Map<string, number>();
    for (const [id, score] of want) {
      const seen = actual.get(id);
      if (seen === score) continue;
      const script = seen === undefined || seen < score ? SCRIPTS.indexSet : SCRIPTS.indexHeal;
      const args = script === SCRIPTS.indexSet ? [score, id] : [id, seen as number, score];
      fixed += await call<number>(ctx, script, [key], args, 'repairing the index');
    }
    for (const [id, score] of actual) {
      if (want.has(id) || corrupt.has(id) || inProgress.has(id)) continue;
      fixed += await call<number>(
        ctx,
        SCRIPTS.indexUnlink,
        [key],
        [id, score],
        'repairing the index',
      );
    }
  }
  return fixed;
}

async function repairChildren(
  ctx: StoreContext,
  truth: Truth,
  inProgress: Set<string>,
): Promise<number> {
  const base = ctx.keys.children('');
  const parents = (await scanKeys(ctx, ctx.keys.childrenPattern)).map((key) =>
    key.slice(base.length),
  );
  const all = new Set([...parents, ...truth.children.keys()]);
  const corrupt = new Set(truth.skippedCorrupt.map((c) => c.id));
  let fixed = 0;
  for (const parent of all) {
    const key = ctx.keys.children(parent);
    const members = new Set(await redis(ctx, () => ctx.client.smembers(key)));
    const want = truth.children.get(parent) ?? new Set<string>();
    // Unreadable sessions and creates in progress keep their links.
    const stale = [...members].filter((m) => !want.has(m) && !corrupt.has(m) && !inProgress.has(m));
    const missing = [...want].filter((m) => !members.has(m));
    if (stale.length > 0) fixed += await redis(ctx, () => ctx.client.srem(key, ...stale));
    if (missing.length > 0) fixed += await redis(ctx, () => ctx.client.sadd(key, ...missing));
  }
  return fixed;
}

function redis<T>(ctx: StoreContext, run: () => Promise<T>): Promise<T> {
  return command(ctx, 'repairing the index', run);
}
