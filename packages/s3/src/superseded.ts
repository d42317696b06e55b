// Removing what a fold superseded: version, text and snapshot objects that no state a
// writer can still start from names. The rule (README "Storage"):
//
// - Versions form one line: version m + 1 is written (If-None-Match: *) only on top of
//   the newest version m, from m's own state or from the fold of m. So once the writer of
//   version m (whose chain starts at the fold of B) has landed it, no later state names
//   an object of a number below B, nor version or text B (their messages are in the fold).
// - The texts and snapshots below that are not slots: they go at once. Readers holding an
//   older state that meet one gone re-read the head (`missing` errors).
// - A version object is a slot: removing version k frees it, and a writer that still
//   thought k - 1 the newest would create k again, on a state long superseded. A writer
//   lands its version within half the grace after it read the head (or reads again), and
//   a fold's witness object, written once the head named version W, dates the moment from
//   which no writer starts below W. So versions up to W go only once the witness is older
//   than the grace, in the server's clock (the listing's times).

import { generationPrefix, sequenceOf, witnessKey } from './keys.js';
import type { ObjectIO } from './objects.js';

/** Slack for the listing's times (S3 reports whole seconds). */
const CLOCK_SLACK_MS = 1000;

/**
 * The commits after a fold on which its writer looks for superseded objects: the first
 * two (the first may still start from the version before the fold, when writers commit
 * back to back), and one halfway to the next fold, by when the grace has often passed.
 */
export function prunesAt(m: number, foldedAt: number): boolean {
  const after = m - foldedAt;
  return after === 1 || after === 2 || after === 17;
}

/** Writes the witness of a fold of version `n` (call only once the head named `n`). */
export async function writeWitness(io: ObjectIO, id: string, gen: string, n: number) {
  // Not empty: some servers and proxies wait for a body that never comes.
  await io.putPlain(witnessKey(id, gen, n), `{"format":1,"n":${n}}`, `folding session "${id}"`);
}

/**
 * Removes the objects of generation `gen` of `id` that no state can still need, as seen
 * by the writer of version `m` whose chain's base is the fold of `base` (see the rule
 * above); returns how many it removed. Throws `unavailable`.
 */
export async function removeSuperseded(
  io: ObjectIO,
  id: string,
  gen: string,
  m: number,
  base: number,
  graceMs: number,
): Promise<number> {
  const doing = `removing superseded objects of "${id}"`;
  const prefix = generationPrefix(id, gen);
  // `f` lists snapshots (f/) and their texts (ft/) together.
  const [versions, texts, folds, witnesses] = await Promise.all([
    io.list(`${prefix}v/`, doing),
    io.list(`${prefix}t/`, doing),
    io.list(`${prefix}f`, doing),
    io.list(`${prefix}w/`, doing),
  ]);
  // The server's time now: when version m landed (this writer's own, just written).
  const own = versions.find((k) => sequenceOf(k.key) === m)?.lastModified?.getTime();
  if (own === undefined) return 0;
  const aged = witnesses
    .filter((w) => (w.lastModified?.getTime() ?? own) + graceMs + CLOCK_SLACK_MS <= own)
    .map((w) => sequenceOf(w.key));
  const slotsUpTo = Math.min(base, aged.length > 0 ? Math.max(...aged) : 0);
  const doomed: string[] = [];
  for (const k of versions) if (sequenceOf(k.key) <= slotsUpTo) doomed.push(k.key);
  for (const k of texts) if (sequenceOf(k.key) <= base) doomed.push(k.key);
  for (const k of folds) if (sequenceOf(k.key) < base) doomed.push(k.key);
  // The newest aged witness stays: it still dates the slots up to it.
  for (const k of witnesses) if (sequenceOf(k.key) < slotsUpTo) doomed.push(k.key);
  if (doomed.length > 0) await io.deleteMany(doomed, doing);
  return doomed.length;
}
