// The plan of `create`: what a new session's stored state is.
import { createdLineage, type HistoryLineage } from '../../history-lineage.js';
import type { Session } from '../../types.js';
import type { SessionState } from '../session-state.js';

/** What `create` stores: the new session's state and its messages. */
export interface CreatePlan {
  state: SessionState;
  messages: unknown[];
}

/**
 * The state of a new session from `create`'s validated input (`prepareCreate`): its header
 * (everything but messages and children), its lineage (`createdLineage`: based on the
 * parent's when `parentLineage` is given, the parent existing) and its message count.
 * Pure.
 */
export function planCreate(
  session: Session<unknown>,
  parentLineage: HistoryLineage | undefined,
): CreatePlan {
  const { messages, children: _children, ...header } = session;
  return {
    state: {
      header,
      lineage: createdLineage(header, parentLineage),
      messageCount: messages.length,
    },
    messages,
  };
}
