// The plan of `save`: the revision check, the header it stores and the lineage rule.
import { savedHeader } from '../../adapter-rules.js';
import type { ErrorFactory } from '../../errors.js';
import { savedLineage } from '../../history-lineage.js';
import { nextWriteTime } from '../../session.js';
import type { Session } from '../../types.js';
import type { SessionState } from '../session-state.js';

/**
 * The state `save(session)` stores over `stored`. Throws `conflict` (write nothing) unless
 * `session.revision` is the stored revision. The header is `savedHeader`'s (revision + 1,
 * `updatedAt` strictly after the stored one (`invalid_argument` when none is left: see
 * `nextWriteTime`), kept `createdAt`/`parentId`/`branchedAtTurn`);
 * the lineage counts a rewrite unless `extended` — the new messages begin with every
 * stored one (`extendsHistory`, which the adapter evaluates where its messages are). Pure.
 */
export function planSave(
  errors: ErrorFactory,
  stored: SessionState,
  session: Session<unknown>,
  extended: boolean,
  now: Date = new Date(),
): SessionState {
  if (session.revision !== stored.header.revision) {
    throw errors.conflict(session.id, session.revision, stored.header.revision);
  }
  // `savedHeader` keeps a time already past the stored one as it is.
  const at = nextWriteTime(errors, stored.header.id, stored.header.updatedAt, now);
  return {
    header: savedHeader(stored.header, session, at),
    lineage: savedLineage(stored.lineage, extended),
    messageCount: session.messages.length,
  };
}
