// The sessionkit calls on the one session that backs a SessionKitSession: window reads,
// commits that create the session on first use, and the operation-id probe.
import {
  type CommitInput,
  type CommitResult,
  type Committer,
  type HistoryReader,
  isSessionKitError,
  loadMessageWindow,
  type MessageWindow,
  type SessionInput,
  type Store,
} from '@sessionkit/core';
import { LOST_RACE, retryLostRaces } from '@sessionkit/core/adapter';
import { errors } from './errors.js';

/** A store with the capabilities the binding needs: atomic commits and window reads. */
export type HistoryStore = Store<unknown> & Committer<unknown> & HistoryReader<unknown>;

/** The fields of the sessionkit session created on first write (all but its id). */
export type SessionFields = Partial<Omit<SessionInput<unknown>, 'id' | 'messages'>>;

// An expectation no history can meet (a session holds at most 2^31 − 1 messages), so a
// commit carrying it writes nothing: it only answers whether its operation id is recorded.
const UNREACHABLE_MESSAGE_COUNT = Number.MAX_SAFE_INTEGER;

/**
 * One sessionkit session seen as an item history. A session that does not exist yet reads
 * as empty, and the first commit creates it (with `fields`); another process creating it
 * at the same moment is not an error.
 */
export class SessionHistory {
  constructor(
    readonly store: HistoryStore,
    readonly id: string,
    private readonly fields: SessionFields,
  ) {}

  /** The whole history (`last` undefined) or its last `last` items: one window read. */
  async items(last?: number): Promise<unknown[]> {
    try {
      return await this.store.loadMessages(this.id, last === undefined ? undefined : { last });
    } catch (e) {
      if (isSessionKitError(e, 'not_found')) return [];
      throw e;
    }
  }

  /**
   * The last `last` items (all of them when `undefined`) with their position, the
   * history's length and the revision, from one snapshot. A missing session is an empty
   * history at revision 0.
   */
  async window(last: number | undefined): Promise<MessageWindow<unknown>> {
    try {
      return await loadMessageWindow(this.store, this.id, last === undefined ? {} : { last });
    } catch (e) {
      if (isSessionKitError(e, 'not_found')) {
        return { messages: [], offset: 0, messageCount: 0, revision: 0 };
      }
      throw e;
    }
  }

  /** `store.commit` on this session, creating the session first when it is missing. */
  async commit(input: CommitInput<unknown>): Promise<CommitResult> {
    try {
      return await this.store.commit(this.id, input);
    } catch (e) {
      if (!isSessionKitError(e, 'not_found')) throw e;
    }
    await this.create();
    return this.store.commit(this.id, input);
  }

  /**
   * `store.commit` on this session when it exists; a missing session is left missing
   * (for writes that only drop items: there is nothing to drop).
   */
  async commitIfExists(input: CommitInput<unknown>): Promise<void> {
    try {
      await this.store.commit(this.id, input);
    } catch (e) {
      if (!isSessionKitError(e, 'not_found')) throw e;
    }
  }

  /**
   * Whether the session has recorded a commit named `operationId`, without writing: a
   * commit whose expectation cannot hold resolves only when the id is recorded (the
   * operation-id check comes before expectations) and is otherwise a `conflict` that
   * wrote nothing.
   */
  async recorded(operationId: string): Promise<boolean> {
    try {
      await this.store.commit(this.id, {
        operationId,
        expectedMessageCount: UNREACHABLE_MESSAGE_COUNT,
      });
      return true;
    } catch (e) {
      if (isSessionKitError(e, 'conflict') || isSessionKitError(e, 'not_found')) return false;
      throw e;
    }
  }

  /**
   * An optimistic change: `attempt` reads what it needs and returns `commitOver`'s
   * outcome; it runs again (after a growing random pause) while another writer got in
   * first, for up to 20 s, then fails `unavailable`. `operation` names it in errors.
   */
  optimistically<T>(operation: string, attempt: () => Promise<T | typeof LOST_RACE>): Promise<T> {
    return retryLostRaces({ errors, operation, sessionId: this.id }, attempt);
  }

  /**
   * `commit(input)` on the condition that the history is still what `window` saw (its
   * revision; for a session that did not exist yet, no messages): `LOST_RACE` when it is
   * not, with nothing written.
   */
  async commitOver(
    window: MessageWindow<unknown>,
    input: CommitInput<unknown>,
  ): Promise<CommitResult | typeof LOST_RACE> {
    const unchanged =
      window.revision > 0
        ? { expectedRevision: window.revision }
        : { expectedMessageCount: window.messageCount };
    try {
      return await this.commit({ ...input, ...unchanged });
    } catch (e) {
      if (isSessionKitError(e, 'conflict')) return LOST_RACE;
      throw e;
    }
  }

  private async create(): Promise<void> {
    try {
      await this.store.create({ ...this.fields, id: this.id });
    } catch (e) {
      if (!isSessionKitError(e, 'exists')) throw e;
    }
  }
}
