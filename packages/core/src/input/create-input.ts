// `create` input: validated, copied once, defaults filled.
import type { ErrorFactory } from '../errors.js';
import type { Message, Session, SessionInput } from '../types.js';
import { readSessionFields } from './fields.js';

/**
 * Validates `create` input and returns the session to store: revision 1, defaults filled
 * (`title ""`, `status "active"`, counters 0, `createdAt`/`updatedAt` now — without a
 * `createdAt`, an older `updatedAt` becomes the creation time), `children` empty, every
 * value a copy read once from `input` (`children`, `revision` and `messageCount` are
 * ignored). Throws `invalid_argument` (also when `updatedAt` is before `createdAt`).
 */
export function prepareCreate<M = Message>(
  errors: ErrorFactory,
  input: SessionInput<M>,
  now: Date = new Date(),
): Session<M> {
  if (typeof input !== 'object' || input === null) {
    throw errors.invalid('create: session must be an object');
  }
  const f = readSessionFields(errors, input, 'create');
  if (f.createdAt && f.updatedAt && f.updatedAt.getTime() < f.createdAt.getTime()) {
    throw errors.invalid('create: updatedAt is before createdAt', f.id);
  }
  const createdAt =
    f.createdAt ??
    new Date(Math.min(now.getTime(), f.updatedAt?.getTime() ?? Number.POSITIVE_INFINITY));
  const session: Session<M> = {
    id: f.id,
    title: f.title ?? '',
    folder: f.folder ?? '',
    createdAt,
    updatedAt: f.updatedAt ?? new Date(createdAt.getTime()),
    model: f.model ?? '',
    provider: f.provider ?? '',
    tokenCount: (f.tokenCount ?? 0) + 0,
    costUsd: (f.costUsd ?? 0) + 0,
    turnCount: (f.turnCount ?? 0) + 0,
    metadata: f.metadata ?? {},
    status: f.status ?? 'active',
    messages: (f.messages ?? []) as M[],
    children: [],
    revision: 1,
  };
  if (f.parentId !== undefined) session.parentId = f.parentId;
  if (f.branchedAtTurn !== undefined) session.branchedAtTurn = f.branchedAtTurn;
  if (f.archivedAt !== undefined) session.archivedAt = f.archivedAt;
  if (f.mode !== undefined) session.mode = f.mode;
  if (f.state !== undefined) session.state = f.state;
  return session;
}
