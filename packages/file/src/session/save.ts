// `save`: a whole session replaced by the caller's copy (a new snapshot), by the kit's
// `planSave`.

import type { Session } from '@sessionkit/core';
import { extendsHistory, planSave } from '@sessionkit/core/adapter';
import { entryOf, type HeaderJson, headerFromJson, headerToJson } from '../format/records.js';
import { appendIndexRecords, putRecord } from '../index-log/append.js';
import { writeSearchFile } from '../search/search-file.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { readFullSession } from './full-read.js';
import { operationsOf } from './operations.js';
import { writeSnapshot } from './snapshot.js';
import { readSessionTip } from './tip.js';

/**
 * Replaces the stored session with `session` (validated, its `messages` a copy nothing
 * else holds). The caller holds the session lock. A stale `revision` → `conflict`,
 * nothing written. The session's operation ids are kept. Returns the stored header.
 */
export async function saveLocked(
  ctx: StoreContext,
  session: Session<unknown>,
): Promise<HeaderJson> {
  const id = session.id;
  const tip = await readSessionTip(ctx, id, 'writer');
  const messages = session.messages;
  // A save is O(history) anyway: the stored messages decide whether it extends them.
  const before = await readFullSession(ctx, id);
  const next = planSave(
    errors,
    { header: headerFromJson(tip.header), lineage: before.lineage, messageCount: tip.messageCount },
    session,
    extendsHistory(before.messages, messages),
  );
  const header = headerToJson(next.header);
  const ops = await operationsOf(ctx, id, tip);
  await writeSnapshot(ctx, id, header, next.lineage, messages, ops);
  await writeSearchFile(ctx, id, messages);
  await appendIndexRecords(ctx, [putRecord(entryOf(header, messages.length))], id);
  return header;
}
