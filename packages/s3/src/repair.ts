// repair(): every session read in full from its versions, the search-text objects and the
// index shards rewritten to match, unreadable sessions reported.
import { isDeepStrictEqual } from 'node:util';
import { isSessionKitError, type RepairReport } from '@sessionkit/core';
import { searchTextsOf } from '@sessionkit/core/adapter';
import { type Chain, entryOf, entryToJson, type IndexEntry } from './codec.js';
import type { StoreContext } from './context.js';
import { isMissing } from './errors.js';
import { readAllMessages, retryMissing } from './history.js';
import { foldTextKey, SESSIONS_PREFIX, shardOf, textKey } from './keys.js';
import { readSearchTextObject, writeSearchTextObject } from './search-text.js';
import { readCurrent } from './session-log.js';

/** What repair decided for one session. */
type Verdict =
  | { kind: 'live'; entry: IndexEntry; textsFixed: number }
  | { kind: 'gone' }
  | { kind: 'corrupt'; reason: string; entry: IndexEntry | undefined };

/** Rewrites the text objects of a chain that differ from the text of `messages`. */
async function fixTexts(
  ctx: StoreContext,
  id: string,
  gen: string,
  chain: Chain,
  messages: unknown[],
): Promise<number> {
  const pieces: Array<{ key: string; from: number; to: number }> = [
    {
      key: chain.base.folded ? foldTextKey(id, gen, chain.base.n) : textKey(id, gen, chain.base.n),
      from: 0,
      to: chain.base.count,
    },
  ];
  let from = chain.base.count;
  for (const part of chain.parts) {
    if (part.end > from) pieces.push({ key: textKey(id, gen, part.n), from, to: part.end });
    from = part.end;
  }
  let fixed = 0;
  const doing = `repairing the search text of "${id}"`;
  for (const piece of pieces) {
    const expected = searchTextsOf(messages.slice(piece.from, piece.to));
    // A piece cut by a truncation holds more texts than the chain takes: compare those.
    // An uncompressed text of an earlier release that matches is kept: it reads as well.
    const stored = await readSearchTextObject(ctx.io, piece.key, doing);
    const taken = stored?.slice(0, expected.length);
    if (taken !== undefined && isDeepStrictEqual(taken, expected)) continue;
    await writeSearchTextObject(ctx.io, piece.key, expected, doing);
    fixed++;
  }
  return fixed;
}

/**
 * Reads one session in full and decides its index entry (again from the head when a fold
 * removed an object of the state first read).
 */
function judge(ctx: StoreContext, id: string): Promise<Verdict> {
  return retryMissing(() => judgeOnce(ctx, id)).catch((e: unknown) => {
    if (!isMissing(e)) throw e;
    return { kind: 'corrupt', reason: (e as Error).message, entry: undefined };
  });
}

async function judgeOnce(ctx: StoreContext, id: string): Promise<Verdict> {
  let current: Awaited<ReturnType<typeof readCurrent>>;
  try {
    current = await readCurrent(ctx.io, id);
  } catch (e) {
    if (!isSessionKitError(e, 'corrupt')) throw e;
    return { kind: 'corrupt', reason: e.message, entry: undefined };
  }
  if (current === undefined || current.tombstone) return { kind: 'gone' };
  const entry = entryOf(current.gen, current.n, current.state);
  try {
    const messages = await readAllMessages(ctx.io, current);
    const textsFixed = await fixTexts(ctx, id, current.gen, current.state.chain, messages);
    return { kind: 'live', entry, textsFixed };
  } catch (e) {
    if (!isSessionKitError(e, 'corrupt') || isMissing(e)) throw e;
    return { kind: 'corrupt', reason: e.message, entry };
  }
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function eachLimited<T>(
  items: T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const asJson = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

/**
 * Rebuilds the index and the search text from the versions of every session. Sessions
 * whose data cannot be read are reported in `skippedCorrupt` (they stay listed when their
 * head still reads); `indexEntriesFixed` counts index entries added, changed or removed
 * and search-text objects rewritten. Reads every object of every session.
 */
export async function rebuildIndex(ctx: StoreContext): Promise<RepairReport> {
  // No healing first: every entry a dead writer left behind is counted as fixed here.
  const folders = await ctx.io.listFolders(SESSIONS_PREFIX, 'listing sessions');
  const ids = folders.map((f) => f.slice(SESSIONS_PREFIX.length, -1));
  const verdicts = new Map<string, Verdict>();
  await eachLimited(ids, 8, async (id) => {
    verdicts.set(id, await judge(ctx, id));
  });
  const skippedCorrupt: RepairReport['skippedCorrupt'] = [];
  let fixed = 0;
  let rebuilt = 0;
  for (const [id, v] of verdicts) {
    if (v.kind === 'corrupt') skippedCorrupt.push({ id, reason: v.reason });
    if (v.kind === 'live') {
      rebuilt++;
      fixed += v.textsFixed;
    }
  }
  for (let shard = 0; shard < ctx.index.shards; shard++) {
    let changes = 0;
    await ctx.index.updateShard(shard, (entries) => {
      changes = 0;
      for (const [id, v] of verdicts) {
        if (shardOf(id, ctx.index.shards) !== shard) continue;
        const want = v.kind === 'gone' ? undefined : v.entry;
        if (want === undefined && v.kind === 'corrupt') continue; // head unreadable: keep what is there
        const wanted = want === undefined ? undefined : asJson(entryToJson(want));
        const have = entries.get(id);
        if (isDeepStrictEqual(have === undefined ? undefined : asJson(have), wanted)) continue;
        changes++;
        if (wanted === undefined) entries.delete(id);
        else entries.set(id, wanted);
      }
      // Entries of sessions that have no objects at all.
      for (const id of [...entries.keys()]) {
        if (!verdicts.has(id)) {
          entries.delete(id);
          changes++;
        }
      }
      return changes > 0;
    });
    fixed += changes;
  }
  return { rebuilt, skippedCorrupt, indexEntriesFixed: fixed };
}
