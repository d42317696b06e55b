// `loadMessages` / `loadMessageWindow`: a window read from the log's end and the
// snapshot's offset table (`window-read.ts`), falling back to a whole read.

import type { MessageWindow } from '@sessionkit/core';
import { type NormalizedMessageWindow, windowBounds } from '@sessionkit/core/adapter';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { READ_ATTEMPTS } from './folder.js';
import { readFullSession } from './full-read.js';
import { readWindowOnce } from './window-read.js';

/**
 * The messages of `window` with their offset, the history's length and the revision, all
 * of one state of the session. Never takes a lock. Throws `not_found`, `corrupt`.
 */
export async function readMessageWindow(
  ctx: StoreContext,
  id: string,
  window: NormalizedMessageWindow,
): Promise<MessageWindow<unknown>> {
  if (window.kind !== 'all') {
    // The window read below is a few synchronous system calls (fast, and one snapshot
    // of the files); yield to the event loop first, as an asynchronous read would, so a
    // caller polling windows in a loop never starves timers and I/O.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const got = readWindowOnce(id, ctx.sessionPaths(id), window, ctx.stats);
      if (got === 'missing') throw errors.notFound(id);
      if (got === 'retry') continue;
      if (got === 'fallback') break;
      ctx.stats.transcriptReads++;
      const { messages, offset, messageCount, header } = got;
      return { messages, offset, messageCount, revision: header.revision };
    }
  }
  const full = await readFullSession(ctx, id);
  const { start, end } = windowBounds(window, full.messages.length);
  return {
    messages:
      start === 0 && end === full.messages.length ? full.messages : full.messages.slice(start, end),
    offset: start,
    messageCount: full.messages.length,
    revision: full.header.revision,
  };
}
