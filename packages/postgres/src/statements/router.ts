// Statements of the session router: bindings `(channel, chat_key, thread) → session` and
// follow targets `(channel, chat_key) → target`. `s`: the quoted schema.
import { sql } from '../sql.js';

/** A binding as `recent` lists it. */
export interface BindingRow {
  session_id: string;
  channel: string;
  chat_key: string;
  thread: string;
  updated_at: Date;
}

/** What `resolve` reads: the follow target of the chat and the thread's binding. */
export interface RouteRow {
  follow: string | null;
  bound: string | null;
}

/** The router statements of schema `s`. */
export function routerStatements(s: string) {
  return {
    /**
     * $1 channel, $2 chat key, $3 thread, $4 session id, $5 now: binds (or re-binds) the
     * tuple when the session exists, at a time strictly after every binding's; one row when
     * it did.
     */
    bind: sql(`INSERT INTO ${s}.bindings (channel, chat_key, thread, session_id, updated_at)
SELECT $1, $2, $3, x.id, greatest($5::timestamptz,
  (SELECT max(b.updated_at) + interval '1 millisecond' FROM ${s}.bindings AS b))
FROM ${s}.sessions AS x WHERE x.id = $4
ON CONFLICT (channel, chat_key, thread)
DO UPDATE SET session_id = EXCLUDED.session_id, updated_at = EXCLUDED.updated_at
RETURNING 1`),

    /** $1 channel, $2 chat key, $3 thread: the follow target and the binding, one row. */
    resolve: sql<RouteRow>(`SELECT
  (SELECT f.target FROM ${s}.follows AS f WHERE f.channel = $1 AND f.chat_key = $2) AS follow,
  (SELECT b.session_id FROM ${s}.bindings AS b
    WHERE b.channel = $1 AND b.chat_key = $2 AND b.thread = $3) AS bound`),

    /** $1 channel, $2 chat key, $3 thread. */
    unbind: sql(`DELETE FROM ${s}.bindings WHERE channel = $1 AND chat_key = $2 AND thread = $3`),

    /** $1 channel, $2 chat key. */
    unfollow: sql(`DELETE FROM ${s}.follows WHERE channel = $1 AND chat_key = $2`),

    /** $1 channel, $2 chat key, $3 target. */
    follow: sql(`INSERT INTO ${s}.follows (channel, chat_key, target) VALUES ($1, $2, $3)
ON CONFLICT (channel, chat_key) DO UPDATE SET target = EXCLUDED.target`),

    /** $1 channel, $2 chat key, $3 thread, $4 now: moves the binding past every binding. */
    touch: sql(`UPDATE ${s}.bindings SET updated_at = greatest($4::timestamptz,
  (SELECT max(b.updated_at) + interval '1 millisecond' FROM ${s}.bindings AS b))
WHERE channel = $1 AND chat_key = $2 AND thread = $3`),

    /** $1 limit: the newest bindings first. */
    recent: sql<BindingRow>(
      `SELECT session_id, channel, chat_key, thread, updated_at FROM ${s}.bindings
ORDER BY updated_at DESC, channel DESC, chat_key DESC, thread DESC LIMIT $1`,
    ),
  };
}

/** The statements `routerStatements` builds. */
export type RouterStatements = ReturnType<typeof routerStatements>;
