import { isEventLog, isRuntimeStatusStore, isSessionKitError, type Store } from '@sessionkit/core';
import { CliError } from '../runtime/cli-error.js';
import { canonicalJson, transcriptDigest } from './digest.js';
import { readSessionRecord, type SessionRecord, toCreateInput } from './session-record.js';

/** What copying one session did. */
export type CopyOutcome =
  /** Created in the target with its status and events. */
  | 'copied'
  /** Already in the target from an earlier, interrupted run: missing status/events added. */
  | 'resumed'
  /** Deleted from the source while the migration ran. */
  | 'vanished';

/**
 * Copies session `id` from `source` to `target`: creates it with its id, dates, tree
 * links, counters and every field, then its runtime status, then its events in order.
 *
 * Idempotent, so an interrupted migration resumes: when the target already has the id
 * with the same transcript and fields (an earlier run created it), only what is missing is
 * added (the runtime status when it differs, the events after the ones already there).
 * Throws a `CliError` when the target holds a different session under that id, and
 * whatever the stores throw.
 */
export async function copySession(
  source: Store<unknown>,
  target: Store<unknown>,
  id: string,
): Promise<CopyOutcome> {
  const record = await readSessionRecord(source, id);
  if (record === undefined) return 'vanished';
  let created = true;
  try {
    await target.create(toCreateInput(record.session));
  } catch (e) {
    if (!isSessionKitError(e, 'exists')) throw e;
    created = false;
    await assertSameTranscript(target, record);
  }
  await copyRuntimeStatus(target, record, created);
  await copyEvents(target, record, created);
  return created ? 'copied' : 'resumed';
}

async function assertSameTranscript(target: Store<unknown>, record: SessionRecord): Promise<void> {
  const existing = await target.load(record.session.id);
  if (transcriptDigest(existing) !== transcriptDigest(record.session)) {
    throw new CliError(
      `the target already holds a different session "${record.session.id}" — migrate into an empty store, or delete that session from the target (if the source changed since an interrupted run, delete it there and run again)`,
    );
  }
}

async function copyRuntimeStatus(
  target: Store<unknown>,
  record: SessionRecord,
  created: boolean,
): Promise<void> {
  if (record.runtimeStatus === null || !isRuntimeStatusStore(target)) return;
  const id = record.session.id;
  if (!created) {
    const stored = await target.loadRuntimeStatus(id);
    if (canonicalJson(stored) === canonicalJson(record.runtimeStatus)) return;
  }
  await target.saveRuntimeStatus(id, record.runtimeStatus);
}

async function copyEvents(
  target: Store<unknown>,
  record: SessionRecord,
  created: boolean,
): Promise<void> {
  if (record.events.length === 0 || !isEventLog(target)) return;
  const id = record.session.id;
  // Sequences are gapless from 1 on every store, so the target's count says how many of
  // the source's events an earlier run already appended.
  const already = created ? 0 : (await target.events(id)).length;
  if (already > record.events.length) {
    throw new CliError(
      `the target's session "${id}" has more events (${already}) than the source's (${record.events.length}) — it was written after an earlier migration; delete it from the target and run again`,
    );
  }
  for (const event of record.events.slice(already)) {
    await target.append(id, event.type, event.payload);
  }
}
