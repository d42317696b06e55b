// load() and loadMessages(): the header, the count and the messages in one script, so a
// read is never torn by a concurrent commit.
import type { MessageWindow, Session } from '@sessionkit/core';
import { type NormalizedMessageWindow, windowBounds } from '@sessionkit/core/adapter';
import { call } from './calls.js';
import { childrenOfOne } from './children.js';
import { decodeMessages } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { SCRIPTS } from './lua/index.js';
import { SEARCH_FORMAT } from './lua/session-scripts.js';
import { stateOf, type VersionedState } from './session-io.js';

/** A snapshot of a session with a range of its messages (JSON texts) and, if asked, their search texts. */
export interface Snapshot extends VersionedState {
  messageTexts: string[];
  /** The search texts of the same range, when asked and stored in this release's format. */
  searchTexts: string[] | undefined;
}

/**
 * The state and the messages at LRANGE positions `from .. to` (`to` = `'none'` for no
 * messages) from one script, with their search texts when `withText`. Throws `not_found`,
 * `corrupt`.
 */
export async function readSnapshot(
  ctx: StoreContext,
  id: string,
  from: number,
  to: number | 'none',
  withText = false,
): Promise<Snapshot> {
  const reply = await call<unknown[] | null>(
    ctx,
    SCRIPTS.readMessages,
    ctx.keys.sessionKeyList(id),
    [from, to, withText ? '1' : '0'],
    `reading session "${id}"`,
  );
  if (reply === null) throw errors.notFound(id);
  const state = stateOf(id, reply);
  const messageTexts = reply[7] as string[];
  if (to !== 'none') ctx.stats.messageBodyReads++;
  const texts = reply[8];
  // Texts of the previous release's format, or not one per message, are not used.
  const usable =
    Array.isArray(texts) && reply[9] === SEARCH_FORMAT && texts.length === messageTexts.length;
  return { ...state, messageTexts, searchTexts: usable ? (texts as string[]) : undefined };
}

/** The whole session with its messages and children. */
export async function loadSession(ctx: StoreContext, id: string): Promise<Session<unknown>> {
  const snap = await readSnapshot(ctx, id, 0, -1);
  if (snap.messageTexts.length !== snap.messageCount) {
    throw errors.corrupt(id, 'the message list does not match the stored count');
  }
  const messages = decodeMessages(id, snap.messageTexts);
  const children = await childrenOfOne(ctx, id);
  return { ...snap.header, messages, children };
}

/** The LRANGE positions of a window (negative from the end, as Redis counts). */
function rangeOf(window: NormalizedMessageWindow): [number, number | 'none'] {
  switch (window.kind) {
    case 'all':
      return [0, -1];
    case 'last':
      return window.last === 0 ? [0, 'none'] : [-window.last, -1];
    case 'range':
      if (window.limit === 0) return [0, 'none'];
      return [window.offset, window.limit === undefined ? -1 : window.offset + window.limit - 1];
  }
}

/** A window of the history with its position, count and revision, from one snapshot. */
export async function loadWindow(
  ctx: StoreContext,
  id: string,
  window: NormalizedMessageWindow,
): Promise<MessageWindow<unknown>> {
  const [from, to] = rangeOf(window);
  const snap = await readSnapshot(ctx, id, from, to);
  // Core decides which messages the window holds; Redis's answer must be exactly those.
  const { start, end } = windowBounds(window, snap.messageCount);
  if (snap.messageTexts.length !== end - start) {
    throw errors.corrupt(id, 'the message list does not match the stored count');
  }
  return {
    messages: decodeMessages(id, snap.messageTexts),
    offset: start,
    messageCount: snap.messageCount,
    revision: snap.header.revision,
  };
}
