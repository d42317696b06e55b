import type { Store } from '../contracts.js';
import { errorsFor } from '../errors.js';
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
 * sibling), with `metadata.forkedFrom = id`. Works on any store. Throws `not_found`.
 */
export async function fork<M = Message>(
  store: Store<M>,
  id: string,
  newId: string = newSessionId(),
): Promise<Session<M>> {
  assertId(errors, id);
  assertId(errors, newId);
  const source = await store.load(id);
  const { children: _c, revision: _r, createdAt: _ca, updatedAt: _ua, ...rest } = source;
  return store.create({ ...rest, id: newId, metadata: { ...source.metadata, forkedFrom: id } });
}

/**
 * The most recently updated unarchived session of `folder` with its messages, or `null`
 * when the folder has none.
 */
export async function latest<M = Message>(
  store: Store<M>,
  folder: string,
): Promise<Session<M> | null> {
  const [top] = await store.list({ folder, limit: 1 });
  if (!top) return null;
  return store.load(top.id);
}
