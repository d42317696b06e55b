// How a LangGraph (thread_id, checkpoint_ns) pair becomes a sessionkit session: an id that
// is always valid and never collides (a hash of both strings), with a readable prefix, and
// the original strings kept exactly in the session's `state` and readably in its title and
// metadata (what `sessionkit list` shows).
import { createHash } from 'node:crypto';
import { MAX_SHORT_TEXT_LENGTH, type SessionInput } from '@sessionkit/core';

/** The `state` every saver session carries: the exact thread id and namespace. */
export interface ThreadState {
  langgraph: 1;
  thread_id: string;
  checkpoint_ns: string;
}

const SLUG_LENGTH = 40;

/**
 * The session id of `(threadId, namespace)`: `<prefix>-<slug>-<hash>`, where the slug is
 * the thread id's first characters with anything outside `[A-Za-z0-9._-]` replaced by
 * `_`, and the hash is 128 bits of SHA-256 over both strings, so two pairs never share a
 * session whatever their characters.
 */
export function sessionIdFor(prefix: string, threadId: string, namespace: string): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([threadId, namespace]))
    .digest('hex')
    .slice(0, 32);
  const slug = threadId.slice(0, SLUG_LENGTH).replace(/[^A-Za-z0-9._-]/g, '_');
  return `${prefix}-${slug}-${hash}`;
}

/** Text fit for a title or metadata value: escapes NUL and lone surrogates, capped. */
function readable(text: string, max: number): string {
  // sessionkit's text fields refuse NUL and lone surrogates; JSON.stringify escapes both
  // (with the other control characters, quotes and backslashes).
  const escaped =
    text.includes('\0') || /\p{Surrogate}/u.test(text) ? JSON.stringify(text).slice(1, -1) : text;
  return escaped.length <= max ? escaped : `${escaped.slice(0, max - 1)}…`;
}

/** What `create` gets for a new thread session (the root namespace or another one). */
export function threadSessionInput(
  id: string,
  folder: string,
  threadId: string,
  namespace: string,
  parentId: string | undefined,
): SessionInput<unknown> {
  const state: ThreadState = { langgraph: 1, thread_id: threadId, checkpoint_ns: namespace };
  const title =
    namespace === ''
      ? readable(threadId, 2000)
      : `${readable(threadId, 1000)} › ${readable(namespace, 1000)}`;
  const metadata: Record<string, string> = {
    'langgraph.thread_id': readable(threadId, MAX_SHORT_TEXT_LENGTH),
  };
  if (namespace !== '')
    metadata['langgraph.checkpoint_ns'] = readable(namespace, MAX_SHORT_TEXT_LENGTH);
  return {
    id,
    folder,
    title,
    metadata,
    state: state as unknown as SessionInput<unknown>['state'],
    ...(parentId === undefined ? {} : { parentId }),
  };
}

/** The thread state of a session's `state`, or undefined when it is not a saver session. */
export function threadStateOf(state: unknown): ThreadState | undefined {
  if (typeof state !== 'object' || state === null) return undefined;
  const s = state as Partial<ThreadState>;
  if (s.langgraph !== 1 || typeof s.thread_id !== 'string' || typeof s.checkpoint_ns !== 'string')
    return undefined;
  return s as ThreadState;
}
