// The sessions of the saver's threads: which session holds a (thread, namespace), creating
// them on first write, finding a thread's namespaces (the root session's children), every
// thread (the saver's folder), and deleting a thread.
import { isSessionKitError, type SessionSummary, type Store } from '@sessionkit/core';
import { sessionIdFor, threadSessionInput, threadStateOf } from './ids.js';

/** One thread as `SessionKitSaver.threads` lists it. */
export interface ThreadInfo {
  /** LangGraph's thread id, exactly as given. */
  threadId: string;
  /** The session holding the thread's root namespace. */
  sessionId: string;
  /** When the thread's root namespace last changed. */
  updatedAt: Date;
  /** Records in the root namespace's session (checkpoints and writes). */
  records: number;
}

/** A page of `SessionKitSaver.threads`. */
export interface ThreadPage {
  threads: ThreadInfo[];
  /** Pass as `startAfter` for the next page; undefined on the last page. */
  next: { updatedAt: Date; id: string } | undefined;
}

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

  /**
   * Threads newest first (by the root namespace's last write), `limit` of them (1–1000,
   * default 50) after the `startAfter` cursor a previous page returned. Reads summaries
   * only.
   */
  async threads(limit = 50, startAfter?: { updatedAt: Date; id: string }): Promise<ThreadPage> {
    const found: ThreadInfo[] = [];
    let cursor = startAfter;
    for (;;) {
      const page = await this.#store.list({
        folder: this.folder,
        includeArchived: true,
        limit: Math.min(PAGE, Math.max(limit * 2, 50)),
        ...(cursor === undefined ? {} : { startAfter: cursor }),
      });
      for (const s of page) {
        cursor = { updatedAt: s.updatedAt, id: s.id };
        const state = threadStateOf(s.state);
        if (state === undefined || state.checkpoint_ns !== '') continue;
        if (s.id !== this.sessionId(state.thread_id, '')) continue;
        found.push({
          threadId: state.thread_id,
          sessionId: s.id,
          updatedAt: s.updatedAt,
          records: s.messageCount,
        });
        if (found.length >= limit) return { threads: found, next: cursor };
      }
      if (page.length === 0 || page.length < Math.min(PAGE, Math.max(limit * 2, 50)))
        return { threads: found, next: undefined };
    }
  }

  /**
   * Copies every namespace of thread `from` to thread `to`: each session's records are
   * created anew under `to`'s ids in one `create` each (the root last, so a thread that
   * lists is complete). Throws `not_found` when `from` has no checkpoints, `exists` when
   * `to` already has a session.
   */
  async copy(from: string, to: string): Promise<void> {
    const sources: SessionAddress[] = [];
    for await (const a of this.addresses(from, undefined)) sources.push(a);
    const root = await this.#store.load(this.sessionId(from, ''));
    const copies = sources.filter((a) => a.namespace !== '');
    for (const a of copies) {
      const session = await this.#store.load(this.sessionId(from, a.namespace));
      await this.#store.create({
        ...threadSessionInput(
          this.sessionId(to, a.namespace),
          this.folder,
          to,
          a.namespace,
          this.sessionId(to, ''),
        ),
        messages: session.messages,
      });
    }
    await this.#store.create({
      ...threadSessionInput(this.sessionId(to, ''), this.folder, to, '', undefined),
      messages: root.messages,
    });
  }

  /**
   * Deletes every thread but the newest `keep` (by the root namespace's last write), each
   * with all its namespaces. Returns how many threads were deleted. Reads summaries only.
   */
  async pruneThreads(keep: number): Promise<number> {
    const doomed: string[] = [];
    let seen = 0;
    let cursor: { updatedAt: Date; id: string } | undefined;
    do {
      const page = await this.threads(PAGE, cursor);
      for (const t of page.threads) {
        seen += 1;
        if (seen > keep) doomed.push(t.threadId);
      }
      cursor = page.next;
    } while (cursor !== undefined);
    for (const threadId of doomed) await this.deleteThread(threadId);
    return doomed.length;
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
