// `save`: a whole session replaced by the caller's copy (a new snapshot).

import type { Session } from '@sessionkit/core';
import { extendsHistory, savedHeader, savedLineage } from '@sessionkit/core/adapter';
import { entryOf, type HeaderJson, headerFromJson, headerToJson } from '../format/records.js';
import { appendIndexRecords, putRecord } from '../index-log/append.js';
import { writeSearchFile } from '../search/search-file.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { readFullSession } from './full-read.js';
import { writeSnapshot } from './snapshot.js';
import { readSessionTip } from './tip.js';

/**
 * Replaces the stored session with `session` (its `messages` already copied). The caller
 * holds the session lock. A stale `revision` → `conflict`, nothing written. Returns the
 * stored header.
 */
export async function saveLocked(
  ctx: StoreContext,
  session: Session<unknown>,
  messages: unknown[],
): Promise<HeaderJson> {
  const id = session.id;
  const tip = await readSessionTip(ctx, id, 'writer');
  const stored = tip.header;
  if (session.revision !== stored.revision) {
    throw errors.conflict(id, session.revision, stored.revision);
  }
  const next = headerToJson(savedHeader(headerFromJson(stored), session));
  // A save is O(history) anyway: the stored messages decide whether it extends them.
  const before = await readFullSession(ctx, id);
  const lineage = savedLineage(before.lineage, extendsHistory(before.messages, messages));
  await writeSnapshot(ctx, id, next, lineage, messages);
  await writeSearchFile(ctx, id, messages);
  await appendIndexRecords(ctx, [putRecord(entryOf(next, messages.length))], id);
  return next;
}
