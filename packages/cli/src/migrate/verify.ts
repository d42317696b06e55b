import { createHash } from 'node:crypto';
import { listRows, type Store } from '@sessionkit/core';
import { inBatches, settleAll } from './batches.js';
import { countSessions, DEFAULT_CONCURRENCY, type MigrateOptions, walkOptions } from './copy.js';
import { canonicalJson, keptFields, sessionDigest } from './digest.js';
import { readSessionRecord, type SessionRecord } from './session-record.js';

/** One session that differs between source and target. */
export interface Mismatch {
  id: string;
  /** What differs, e.g. `missing in the target`, `message count 5 ≠ 4`. */
  reason: string;
}

/** What `verifyMigration` found. */
export interface VerifyResult {
  /** True when every check held. */
  ok: boolean;
  sourceCount: number;
  targetCount: number;
  /** Messages and events over all source sessions. */
  messages: number;
  events: number;
  /** sha256 over the per-session digests, in the source's listing order, on each side. */
  sourceDigest: string;
  targetDigest: string;
  /** How many sessions differ, and the first `MAX_REPORTED` of them. */
  mismatchCount: number;
  mismatches: Mismatch[];
}

/** Mismatches kept for the report (the count covers all of them). */
export const MAX_REPORTED = 20;

/**
 * Compares `target` with `source` after a migration: the session counts (with the same
 * folder filter), each session's message count, and a content digest of each session
 * (every kept field, `children`, messages, runtime status, and events as sequence, type
 * and payload; object keys compared in canonical order), combined into one digest per
 * side. Streams like the copy: one page and `concurrency` sessions of each side in
 * memory. `onProgress` reports `verify` per session; `signal` stops it between batches.
 */
export async function verifyMigration(
  source: Store<unknown>,
  target: Store<unknown>,
  options: MigrateOptions & { sourceCount?: number | undefined } = {},
): Promise<VerifyResult> {
  const sourceCount = options.sourceCount ?? (await countSessions(source, options));
  const sourceHash = createHash('sha256');
  const targetHash = createHash('sha256');
  const result: VerifyResult = {
    ok: false,
    sourceCount,
    targetCount: 0,
    messages: 0,
    events: 0,
    sourceDigest: '',
    targetDigest: '',
    mismatchCount: 0,
    mismatches: [],
  };
  let done = 0;
  const rows = listRows(source, walkOptions(options, 'verify'));
  for await (const batch of inBatches(rows, options.concurrency ?? DEFAULT_CONCURRENCY)) {
    options.signal?.throwIfAborted();
    const compared = await settleAll(batch, async (row) => {
      const pair = await comparePair(source, target, row.id);
      done++;
      options.onProgress?.({ phase: 'verify', done, total: Math.max(sourceCount, done) });
      return pair;
    });
    // Hashed in listing order, whatever order the batch finished in.
    for (const pair of compared) {
      if (pair === undefined) continue; // deleted from the source meanwhile
      result.messages += pair.messages;
      result.events += pair.events;
      sourceHash.update(`${pair.id}:${pair.mine}\n`);
      targetHash.update(`${pair.id}:${pair.theirs}\n`);
      if (pair.difference !== undefined) addMismatch(result, pair.id, pair.difference);
    }
  }
  result.targetCount = await countSessions(target, options, 'count target');
  result.sourceDigest = sourceHash.digest('hex');
  result.targetDigest = targetHash.digest('hex');
  result.ok =
    result.mismatchCount === 0 &&
    result.targetCount === result.sourceCount &&
    result.sourceDigest === result.targetDigest;
  return result;
}

/** One session compared: both digests and, when they differ, how. */
interface ComparedPair {
  id: string;
  mine: string;
  theirs: string;
  messages: number;
  events: number;
  difference: string | undefined;
}

async function comparePair(
  source: Store<unknown>,
  target: Store<unknown>,
  id: string,
): Promise<ComparedPair | undefined> {
  const mine = await readSessionRecord(source, id);
  if (mine === undefined) return undefined;
  const theirs = await readSessionRecord(target, id);
  const mineDigest = sessionDigest(mine);
  const theirDigest = theirs === undefined ? `missing:${id}` : sessionDigest(theirs);
  return {
    id,
    mine: mineDigest,
    theirs: theirDigest,
    messages: mine.session.messages.length,
    events: mine.events.length,
    difference: mineDigest === theirDigest ? undefined : describeDifference(mine, theirs),
  };
}

function addMismatch(result: VerifyResult, id: string, reason: string): void {
  result.mismatchCount++;
  if (result.mismatches.length < MAX_REPORTED) result.mismatches.push({ id, reason });
}

/** A short description of how `theirs` (the target's copy) differs from `mine`. */
export function describeDifference(mine: SessionRecord, theirs: SessionRecord | undefined): string {
  if (theirs === undefined) return 'missing in the target';
  const a = mine.session;
  const b = theirs.session;
  if (a.messages.length !== b.messages.length) {
    return `message count ${a.messages.length} in the source, ${b.messages.length} in the target`;
  }
  const fa = keptFields(a, true);
  const fb = keptFields(b, true);
  const fields = [...new Set([...Object.keys(fa), ...Object.keys(fb)])]
    .filter((k) => canonicalJson(fa[k]) !== canonicalJson(fb[k]))
    .sort();
  if (fields.length > 0) return `fields differ: ${fields.join(', ')}`;
  if (a.messages.some((m, i) => canonicalJson(m) !== canonicalJson(b.messages[i]))) {
    return 'message content differs';
  }
  if (canonicalJson(mine.runtimeStatus) !== canonicalJson(theirs.runtimeStatus)) {
    return 'runtime status differs';
  }
  return `events differ (${mine.events.length} in the source, ${theirs.events.length} in the target)`;
}
