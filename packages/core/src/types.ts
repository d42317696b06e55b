/** Any value that survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** One part of a multi-part message body. */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: string; data?: string; url?: string }
  | { type: 'file'; mediaType: string; name?: string; data?: string; url?: string }
  | { type: string; [key: string]: JsonValue | undefined };

/** A tool invocation requested by the assistant. */
export interface ToolCall {
  id: string;
  name: string;
  /** Arguments as the provider sent them (usually a JSON object). */
  arguments: JsonValue;
}

/**
 * A provider-neutral chat message. Stores treat messages as opaque JSON: any JSON value
 * you put in comes back equal, so an application may use its own message type instead
 * (`Session<MyMessage>`).
 */
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool' | (string & {});
  /** Plain text, or content parts for multi-modal messages. */
  content: string | ContentPart[];
  toolCalls?: ToolCall[];
  /** For `role: "tool"`: the call this message answers. */
  toolCallId?: string;
  /** The tool's name or the speaker's name. */
  name?: string;
  metadata?: JsonObject;
}

/**
 * A conversation. `revision` is the optimistic-concurrency token: every write bumps it.
 * `children` and `messageCount` are derived by the store and never written by callers.
 */
export interface Session<M = Message> {
  /** 1–128 chars of `[A-Za-z0-9._-]`, not starting with `.`. */
  id: string;
  title: string;
  /** The workspace the conversation belongs to (a project path, a chat id …). */
  folder: string;
  /** Set on branches and forks: the session this one came from. */
  parentId?: string | undefined;
  createdAt: Date;
  updatedAt: Date;
  model: string;
  provider: string;
  tokenCount: number;
  costUsd: number;
  turnCount: number;
  metadata: Record<string, string>;
  /** Free string; `"active"` by default. */
  status: string;
  messages: M[];
  /** Ids of the sessions whose `parentId` is this one, ascending. Maintained by the store. */
  children: string[];
  /** For branches: how many of the parent's messages the branch started with. */
  branchedAtTurn?: number | undefined;
  /** Positive integer; 1 after `create`, +1 on every write. */
  revision: number;
  archivedAt?: Date | undefined;
  mode?: string | undefined;
  /** Any JSON the application keeps with the conversation (plan, goal, agents …). */
  state?: JsonValue | undefined;
}

/** A session without its messages, as listing returns it. Listing never reads message bodies. */
export type SessionSummary = Omit<Session<never>, 'messages'> & { messageCount: number };

/**
 * What `Store.create` accepts: an id plus any fields; the rest take their defaults
 * (`title ""`, `status "active"`, counters 0, `createdAt`/`updatedAt` now). Given
 * `createdAt`/`updatedAt` are kept, so imports and migrations preserve history.
 */
export type SessionInput<M = Message> = { id: string } & Partial<
  Omit<Session<M>, 'id' | 'children' | 'revision'>
>;

/** Keyset cursor: the `updatedAt` and `id` of the last summary of the previous page. */
export interface ListCursor {
  updatedAt: Date;
  /** Compared as a byte string; any string of at most 128 chars (`""` sorts first). */
  id: string;
}

/** Options of `Store.list`. Unknown keys are rejected with `invalid_argument`. */
export interface ListOptions {
  /** Only sessions of this folder. */
  folder?: string | undefined;
  /** Only sessions with this status. */
  status?: string | undefined;
  /** Only direct children of this session. */
  parentId?: string | undefined;
  /** Only sessions whose `updatedAt` is strictly after this instant. */
  after?: Date | undefined;
  /** Case-insensitive substring of the title or of any message text. */
  query?: string | undefined;
  /** Include archived sessions. Default false. */
  includeArchived?: boolean | undefined;
  /** `updatedAt` asc, then `id` asc. Default false (newest first). */
  oldestFirst?: boolean | undefined;
  /** 1–1000; absent or 0 → 50; negative or over 1000 → `invalid_argument`. */
  limit?: number | undefined;
  /** Rows to skip after filtering. Default 0. */
  offset?: number | undefined;
  /** Keyset paging: only sessions strictly after this cursor in the chosen order. */
  startAfter?: ListCursor | undefined;
}

/** Fields a commit may change. Unknown keys are rejected with `invalid_argument`. */
export interface SessionPatch {
  title?: string;
  folder?: string;
  status?: string;
  model?: string;
  provider?: string;
  tokenCount?: number;
  costUsd?: number;
  turnCount?: number;
  /** Merged into the stored metadata; a `null` value removes that key. */
  metadata?: Record<string, string | null>;
  /** `null` removes the state. */
  state?: JsonValue | null;
  /** `null` unarchives. */
  archivedAt?: Date | null;
  /** `null` clears the mode. */
  mode?: string | null;
}

/** Counter increments applied atomically with a commit (safe without expectations). */
export interface CounterIncrement {
  tokenCount?: number;
  costUsd?: number;
  turnCount?: number;
}

/**
 * One turn's write. `replace` excludes both `append` and `truncate`; `truncate` and
 * `append` combine (keep the first `truncate` messages, then append).
 */
export interface CommitInput<M = Message> {
  /** Fail with `conflict` unless the stored revision equals this. */
  expectedRevision?: number | undefined;
  /** Fail with `conflict` unless the stored history has exactly this many messages. */
  expectedMessageCount?: number | undefined;
  /** Messages added after the stored history (after the kept prefix with `truncate`). */
  append?: M[] | undefined;
  /** A new history replacing the stored one (compaction, edits). */
  replace?: M[] | undefined;
  /**
   * Keep the first `truncate` messages and drop the rest, before `append`, in the same
   * atomic step. From 0 to the stored message count, else `invalid_argument` (nothing
   * written). Its cost grows with the messages dropped and appended, not with those kept.
   * Dropping any message is a history rewrite: a branch taken before it no longer merges.
   */
  truncate?: number | undefined;
  /**
   * Names one logical write (1–256 chars, no NUL or lone surrogate), so that a retry after
   * a lost reply or an `unavailable` error is safe: a commit whose `operationId` the
   * session has already recorded writes nothing and resolves with the result the first one
   * got, even when its expectations no longer hold. Recorded in the same atomic step as the
   * write; each session remembers at least its last `MAX_REMEMBERED_OPERATIONS` (1,000).
   */
  operationId?: string | undefined;
  patch?: SessionPatch | undefined;
  increment?: CounterIncrement | undefined;
}

/**
 * The trailing options of a store call that can take long. `signal`: aborting it before
 * the call rejects with `aborted` and writes nothing; during a read it stops the read
 * (`aborted`); a write that has reached its atomic step lands whole, one that has not is
 * abandoned (`aborted`, nothing written). Unknown keys are rejected (`invalid_argument`).
 */
export interface CallOptions {
  signal?: AbortSignal | undefined;
}

/** What a commit returns. */
export interface CommitResult {
  revision: number;
  messageCount: number;
  updatedAt: Date;
}

/**
 * Which part of a history `loadMessages` returns. Absent or `{}`: all of it. `{last: n}`:
 * the last `n` messages (all of them when there are fewer). `{offset, limit}`: the
 * messages at positions `offset … offset + limit − 1` (0-based; `offset` default 0,
 * `limit` default to the end). A window past the end is empty, never an error. Values
 * are non-negative integers; `last` cannot be combined with `offset`/`limit`; unknown
 * keys are rejected (`invalid_argument`).
 */
export interface MessageWindowQuery {
  last?: number | undefined;
  offset?: number | undefined;
  limit?: number | undefined;
}

/**
 * A window of a history with its position, all from one snapshot: `messages` are the
 * messages at positions `offset … offset + messages.length − 1` of a history that had
 * `messageCount` messages at `revision`. To page backwards from `{last: n}`, ask for
 * `{offset: max(0, offset − n), limit: min(n, offset)}` next (and compare `revision`
 * to notice a history that was replaced in between).
 */
export interface MessageWindow<M = Message> {
  messages: M[];
  /** Absolute position of `messages[0]` in the history. */
  offset: number;
  /** Length of the whole history in the same snapshot. */
  messageCount: number;
  /** The session's revision in the same snapshot. */
  revision: number;
}

/** A chat-gateway binding as `SessionRouter.recent` returns it. */
export interface RouterRow {
  sessionId: string;
  channel: string;
  chatKey: string;
  thread: string;
  updatedAt: Date;
}

/** One record of a session's event log. */
export interface SessionEvent {
  /** 1, 2, 3 … per session, without gaps. */
  sequence: number;
  /** The session's revision when the event was appended. */
  revision: number;
  at: Date;
  type: string;
  payload: JsonValue;
}

/** Options of `EventLog.events`. */
export interface EventQuery {
  /** Only events with a larger sequence. Default 0 (all). */
  afterSequence?: number | undefined;
  /** At most this many events (1–10000). Default: all. */
  limit?: number | undefined;
}

/** What `Repairer.repair` did. */
export interface RepairReport {
  /** Sessions whose index entry was rebuilt from authoritative data. */
  rebuilt: number;
  /** Sessions that could not be read; left untouched on disk. */
  skippedCorrupt: { id: string; reason: string }[];
  /** Index entries added, corrected or removed. */
  indexEntriesFixed: number;
}
