import {
  isEventLog,
  isRuntimeStatusStore,
  isSessionKitError,
  type JsonValue,
  type Session,
  type SessionEvent,
  type SessionInput,
  type Store,
} from '@sessionkit/core';

/** One session as a migration reads it: the session, its runtime status and its events. */
export interface SessionRecord {
  session: Session<unknown>;
  /** `null` when none is stored or the store has no runtime status. */
  runtimeStatus: JsonValue | null;
  /** Empty when the store keeps no events. */
  events: SessionEvent[];
}

/**
 * Reads `id` with its runtime status and events from `store`, or `undefined` when the
 * session does not exist (deleted meanwhile). Throws whatever else the store throws.
 */
export async function readSessionRecord(
  store: Store<unknown>,
  id: string,
): Promise<SessionRecord | undefined> {
  try {
    const session = await store.load(id);
    const runtimeStatus = isRuntimeStatusStore(store) ? await store.loadRuntimeStatus(id) : null;
    const events = isEventLog(store) ? await store.events(id) : [];
    return { session, runtimeStatus, events };
  } catch (e) {
    if (isSessionKitError(e, 'not_found')) return undefined;
    throw e;
  }
}

/**
 * What `create` takes to recreate `session` elsewhere: every field with its id, dates and
 * `parentId`, without what the target derives (`children`, `revision`).
 */
export function toCreateInput(session: Session<unknown>): SessionInput<unknown> {
  const { children: _children, revision: _revision, ...input } = session;
  return input as SessionInput<unknown>;
}
