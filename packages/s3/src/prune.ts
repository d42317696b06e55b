// enforceMax(): the kit's prune victims from the index, deleted one at a time (S3 has no
// multi-object transaction; a crash in between leaves fewer deleted, never a torn one).
import { pruneVictims, throwIfAborted } from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { indexView } from './list.js';
import { removeSession } from './tree.js';

/**
 * Deletes all but the newest `max` root sessions (ranked as `list` ranks them, archived
 * ones included; `max > 0`) with `delete`'s semantics; returns how many it deleted. An
 * aborted `signal` stops it between two deletes (each landed whole): `aborted` before the
 * first, else the count of those done.
 */
export async function pruneRoots(
  ctx: StoreContext,
  max: number,
  signal?: AbortSignal,
): Promise<number> {
  const entries = await indexView(ctx);
  const roots = [...entries.values()]
    .filter((e) => e.header.parentId === undefined)
    .map((e) => e.header);
  let deleted = 0;
  for (const victim of pruneVictims(roots, max)) {
    if (deleted === 0) throwIfAborted(errors, signal, 'enforceMax');
    else if (signal?.aborted) break;
    if (await removeSession(ctx, victim.id)) deleted++;
  }
  return deleted;
}
