import type { Store } from '../contracts.js';
import { errorsFor, isSessionKitError } from '../errors.js';
import { newSessionId } from '../ids.js';
import type { CommitResult, Message, Session } from '../types.js';
import { assertId } from '../validate.js';
import { commitTurn } from './commit-turn.js';

const errors = errorsFor('core');

/** Sets `archivedAt` to now (archived sessions leave default listings). Throws `not_found`. */
export function archive<M = Message>(
  store: Store<M>,
  id: string,
  at: Date = new Date(),
): Promise<CommitResult> {
  return commitTurn(store, id, { patch: { archivedAt: at } });
}

/** Clears `archivedAt`. Throws `not_found`. */
export function unarchive<M = Message>(store: Store<M>, id: string): Promise<CommitResult> {
  return commitTurn(store, id, { patch: { archivedAt: null } });
}

/** Sets the title. Throws `not_found`, `invalid_argument`. */
export function rename<M = Message>(
  store: Store<M>,
  id: string,
  title: string,
): Promise<CommitResult> {
  return commitTurn(store, id, { patch: { title } });
}

/**
 * A copy of the session with its full history that keeps the original's `parentId` (a
 * sibling), with `metadata.forkedFrom = id`, not archived. Works on any store. Throws
 * `not_found`.
 */
export async function fork<M = Message>(
  store: Store<M>,
  id: string,
  newId: string = newSessionId(),
): Promise<Session<M>> {
  assertId(errors, id);
  assertId(errors, newId);
  const source = await store.load(id);
  // A fork is made to carry on working, so it starts unarchived.
  const {
    children: _c,
    revision: _r,
    createdAt: _ca,
    updatedAt: _ua,
    archivedAt: _aa,
    ...rest
  } = source;
  return store.create({ ...rest, id: newId, metadata: { ...source.metadata, forkedFrom: id } });
}

/** How often `latest` lists again when the session it found is deleted before it loads. */
const LATEST_ATTEMPTS = 5;

/**
 * The most recently updated unarchived session of `folder` with its messages, or `null`
 * when the folder has none. When the session the listing found is deleted before it can
 * be loaded, it lists again (up to 5 times) rather than fail with `not_found`.
 * Throws `invalid_argument` for a bad folder, and what the store throws.
 */
export async function latest<M = Message>(
  store: Store<M>,
  folder: string,
): Promise<Session<M> | null> {
  for (let attempt = 1; ; attempt++) {
    const [top] = await store.list({ folder, limit: 1 });
    if (!top) return null;
    try {
      return await store.load(top.id);
    } catch (e) {
      // Deleted between the listing and the load: the next listing shows the new latest.
      if (!isSessionKitError(e, 'not_found') || attempt >= LATEST_ATTEMPTS) throw e;
    }
  }
}
