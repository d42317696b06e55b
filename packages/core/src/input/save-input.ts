// `save` input: a whole session, validated and copied once.
import type { ErrorFactory } from '../errors.js';
import type { Session } from '../types.js';
import { readSessionFields } from './fields.js';

/**
 * Validates `save` input and returns a copy read once from it: every field of a session,
 * `title`, `folder`, `status`, `model`, `provider` and `messages` required, `revision` a
 * positive integer (the expected stored revision). Absent counters read as 0, absent
 * `metadata` as `{}`; `children` is `[]` (the store derives it). Throws `invalid_argument`.
 */
export function normalizeSaveInput<M>(errors: ErrorFactory, session: Session<M>): Session<M> {
  if (typeof session !== 'object' || session === null) {
    throw errors.invalid('save: session must be an object');
  }
  const f = readSessionFields(errors, session, 'save');
  const rev = f.revision;
  if (typeof rev !== 'number' || !Number.isSafeInteger(rev) || rev < 1) {
    throw errors.invalid(`save: revision must be a positive integer, got ${String(rev)}`, f.id);
  }
  for (const key of ['title', 'folder', 'status', 'model', 'provider'] as const) {
    if (typeof f[key] !== 'string') throw errors.invalid(`save: ${key} is required`, f.id);
  }
  if (f.messages === undefined) throw errors.invalid('save: messages is required', f.id);
  const out: Session<M> = {
    id: f.id,
    title: f.title as string,
    folder: f.folder as string,
    createdAt: f.createdAt ?? new Date(0),
    updatedAt: f.updatedAt ?? new Date(0),
    model: f.model as string,
    provider: f.provider as string,
    tokenCount: (f.tokenCount ?? 0) + 0,
    costUsd: (f.costUsd ?? 0) + 0,
    turnCount: (f.turnCount ?? 0) + 0,
    metadata: f.metadata ?? {},
    status: f.status as string,
    messages: f.messages as M[],
    children: [],
    revision: rev,
  };
  if (f.parentId !== undefined) out.parentId = f.parentId;
  if (f.branchedAtTurn !== undefined) out.branchedAtTurn = f.branchedAtTurn;
  if (f.archivedAt !== undefined) out.archivedAt = f.archivedAt;
  if (f.mode !== undefined) out.mode = f.mode;
  if (f.state !== undefined) out.state = f.state;
  return out;
}

/**
 * Validates `save` input (see `normalizeSaveInput`, whose copy it discards). Throws
 * `invalid_argument`.
 */
export function assertSaveInput<M>(errors: ErrorFactory, session: Session<M>): void {
  normalizeSaveInput(errors, session);
}
