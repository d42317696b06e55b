// The sessions of the saver's threads: which session holds a (thread, namespace), creating
// them on first write, finding a thread's namespaces (the root session's children), every
// thread (the saver's folder), and deleting a thread.
import { isSessionKitError, type SessionSummary, type Store } from '@sessionkit/core';
import { sessionIdFor, threadSessionInput, threadStateOf } from './ids.js';

/** A thread and one of its checkpoint namespaces (`""` for the root graph). */
export interface SessionAddress {
  threadId: string;
  namespace: string;
}

const PAGE = 1000;

export class ThreadSessions {
  readonly #store: Store<unknown>;
  readonly folder: string;
  readonly #prefix: string;

  constructor(store: Store<unknown>, folder: string, prefix: string) {
    this.#store = store;
    this.folder = folder;
    this.#prefix = prefix;
  }

  /** The session id of `(threadId, namespace)`. No I/O. */
  sessionId(threadId: string, namespace: string): string {
    return sessionIdFor(this.#prefix, threadId, namespace);
  }

  /**
   * Creates the session of `address` unless it exists; a namespace's session is created
   * as a child of the thread's root session, which is created first (empty) when missing,
   * so a thread is always listed by its root session.
   */
  async ensure(address: SessionAddress): Promise<void> {
    const root = this.sessionId(address.threadId, '');
    await this.#createIfMissing(root, address.threadId, '', undefined);
    if (address.namespace !== '')
      await this.#createIfMissing(
        this.sessionId(address.threadId, address.namespace),
        address.threadId,
        address.namespace,
        root,
      );
  }

  async #createIfMissing(
    id: string,
    threadId: string,
    namespace: string,
    parentId: string | undefined,
  ): Promise<void> {
    try {
      await this.#store.create(threadSessionInput(id, this.folder, threadId, namespace, parentId));
    } catch (e) {
      if (!isSessionKitError(e, 'exists')) throw e;
    }
  }

  /**
   * The addresses to list: one namespace of a thread, every namespace of a thread (the
   * root session and its children), or every thread of the folder (`threadId` undefined),
   * optionally of one namespace only. Reads summaries only, never records.
   */
  async *addresses(
    threadId: string | undefined,
    namespace: string | undefined,
  ): AsyncGenerator<SessionAddress> {
    if (threadId !== undefined) {
      if (namespace !== undefined) {
        yield { threadId, namespace };
        return;
      }
      yield { threadId, namespace: '' };
      for await (const s of this.#pages({ parentId: this.sessionId(threadId, '') })) {
        const state = threadStateOf(s.state);
        if (state?.thread_id === threadId && state.checkpoint_ns !== '')
          yield { threadId, namespace: state.checkpoint_ns };
      }
      return;
    }
    for await (const s of this.#pages({ folder: this.folder })) {
      const state = threadStateOf(s.state);
      if (state === undefined || s.id !== this.sessionId(state.thread_id, state.checkpoint_ns))
        continue;
      if (namespace === undefined || state.checkpoint_ns === namespace)
        yield { threadId: state.thread_id, namespace: state.checkpoint_ns };
    }
  }

  /** Deletes every session of the thread (namespaces first, then the root). */
  async deleteThread(threadId: string): Promise<void> {
    const ids: string[] = [];
    for await (const a of this.addresses(threadId, undefined))
      if (a.namespace !== '') ids.push(this.sessionId(threadId, a.namespace));
    ids.push(this.sessionId(threadId, ''));
    for (const id of ids) {
      try {
        await this.#store.delete(id);
      } catch (e) {
        if (!isSessionKitError(e, 'not_found')) throw e;
      }
    }
  }

  /** Every summary matching `filter`, newest first, in keyset pages. */
  async *#pages(filter: { folder?: string; parentId?: string }): AsyncGenerator<SessionSummary> {
    let startAfter: { updatedAt: Date; id: string } | undefined;
    for (;;) {
      const page = await this.#store.list({
        ...filter,
        includeArchived: true,
        limit: PAGE,
        ...(startAfter === undefined ? {} : { startAfter }),
      });
      yield* page;
      if (page.length < PAGE) return;
      const last = page.at(-1)!;
      startAfter = { updatedAt: last.updatedAt, id: last.id };
    }
  }
}
