import type { Store } from '../contracts.js';
import { isHistoryReader } from '../contracts.js';
import { errorsFor } from '../errors.js';
import { normalizeMessageWindow, windowBounds } from '../message-window.js';
import type { Message, MessageWindow, MessageWindowQuery } from '../types.js';
import { assertId } from '../validate.js';

const errors = errorsFor('core');

/**
 * A window of a session's history with its absolute position, the history's length and
 * the revision, all from one snapshot (see `MessageWindow`). Uses the store's own
 * `loadMessageWindow` when it has one (cost grows with the window); otherwise slices one
 * full `load` (cost grows with the history). Throws `invalid_argument` (bad id or window,
 * before any I/O), `not_found`, and whatever the store throws.
 */
export async function loadMessageWindow<M = Message>(
  store: Store<M>,
  id: string,
  window?: MessageWindowQuery,
): Promise<MessageWindow<M>> {
  if (isHistoryReader<M>(store) && typeof store.loadMessageWindow === 'function') {
    return store.loadMessageWindow(id, window);
  }
  assertId(errors, id);
  const normalized = normalizeMessageWindow(errors, window);
  const session = await store.load(id);
  const { start, end } = windowBounds(normalized, session.messages.length);
  return {
    messages: session.messages.slice(start, end),
    offset: start,
    messageCount: session.messages.length,
    revision: session.revision,
  };
}
