// What a SessionKitSession is made from, checked once when it is constructed.
import { isCommitter, isHistoryReader, isStore, isValidId, newSessionId } from '@sessionkit/core';
import { errors } from './errors.js';
import type { HistoryStore, SessionFields } from './session-history.js';

/** Options of `new SessionKitSession(options)`. */
export interface SessionKitSessionOptions {
  /**
   * The store that keeps the history: any sessionkit store with `commit` and
   * `loadMessages` (every first-party adapter). Borrowed: `close()` leaves it open.
   */
  store: HistoryStore;
  /**
   * The sessionkit session that holds the items (1–128 characters of `[A-Za-z0-9._-]`, not
   * starting with `.`). It need not exist: it reads as empty and the first write creates
   * it. Default: a new time-sortable id (`newSessionId()`).
   */
  sessionId?: string | undefined;
  /**
   * Fields of the sessionkit session when the first write creates it (`title`, `folder`,
   * `metadata`, `model` …; checked by the store then). Default: none (the store's
   * defaults). An existing session is never changed by them.
   */
  session?: SessionFields | undefined;
}

/** Options of `SessionKitSession.fromUrl(url, options)`. */
export interface SessionKitSessionUrlOptions extends Omit<SessionKitSessionOptions, 'store'> {
  /** Passed to `openStore(url, storeOptions)` (adapter options). Default: none. */
  storeOptions?: Record<string, unknown> | undefined;
}

/** The checked options: a store with the capabilities, an id, creation fields. */
export interface CheckedOptions {
  store: HistoryStore;
  sessionId: string;
  session: SessionFields;
}

/** Checks `options`. Throws `invalid_argument`. */
export function checkOptions(options: SessionKitSessionOptions): CheckedOptions {
  if (typeof options !== 'object' || options === null) {
    throw errors.invalid('SessionKitSession: options must be an object');
  }
  const { store, sessionId, session } = options;
  if (!isStore(store) || !isCommitter(store) || !isHistoryReader(store)) {
    throw errors.invalid(
      'SessionKitSession: options.store must be a sessionkit store with commit and loadMessages',
    );
  }
  if (sessionId !== undefined && !isValidId(sessionId)) {
    throw errors.invalid(
      `SessionKitSession: sessionId must be 1–128 characters of [A-Za-z0-9._-], not starting with ".", got ${JSON.stringify(String(sessionId))}`,
    );
  }
  if (session !== undefined && (typeof session !== 'object' || session === null)) {
    throw errors.invalid('SessionKitSession: options.session must be an object');
  }
  return {
    store: store as HistoryStore,
    sessionId: sessionId ?? newSessionId(),
    session: { ...session },
  };
}
