// listChats: a user's chats for a sidebar, from the store's summaries (never a transcript),
// newest first and keyset paged.
import type { ListCursor, ListOptions, SessionSummary } from '@sessionkit/core';
import { errors } from './errors.js';

/** One chat in a listing: the sessionkit summary's fields an application shows. */
export interface ChatSummary {
  /** The chat id (the sessionkit session id). */
  id: string;
  /** The chat's title: given to `createChat`, or its first user message (`""` before). */
  title: string;
  /** The user the chat was created for (`""` when none was given). */
  userId: string;
  createdAt: Date;
  /** When the chat was last written (a message or a reply saved). */
  updatedAt: Date;
  /** How many messages the chat holds. */
  messageCount: number;
}

/**
 * Where the next page starts: the `updatedAt` and `id` of the last chat of the previous
 * page (a `ChatSummary` is one). `updatedAt` may be a `Date` or its ISO string, as a chat
 * summary reads after a JSON round trip.
 */
export interface ChatCursor {
  updatedAt: Date | string;
  id: string;
}

/** Options of `listChats`. */
export interface ListChatsOptions {
  /** Whose chats: the `userId` given to `createChat`. Required (`""` for chats without one). */
  userId: string;
  /**
   * Only chats whose title or one message's text contains this (case-insensitive): the
   * text parts of `UIMessage`s, never tool inputs or outputs, reasoning or JSON keys.
   * Default: every chat of the user.
   */
  query?: string | undefined;
  /** The page after this chat (keyset paging, stable while chats are written). Default: the first page. */
  startAfter?: ChatCursor | undefined;
  /** Chats per page, 1–1000. Default 50. */
  limit?: number | undefined;
  /** Aborts the listing (`aborted`). */
  signal?: AbortSignal | undefined;
}

/** The `list` options of `options` for chats kept in folders `folderPrefix + userId`. */
export function listOptionsOf(options: ListChatsOptions, folderPrefix: string): ListOptions {
  if (typeof options !== 'object' || options === null || typeof options.userId !== 'string') {
    throw errors.invalid('listChats: options.userId must be a string');
  }
  const { query, startAfter, limit } = options;
  return {
    folder: folderPrefix + options.userId,
    ...(query === undefined || query === '' ? {} : { query }),
    ...(startAfter === undefined ? {} : { startAfter: cursorOf(startAfter) }),
    ...(limit === undefined ? {} : { limit }),
  };
}

/** The chat summary of a sessionkit summary listed from `folderPrefix + userId`. */
export function chatSummaryOf(summary: SessionSummary, folderPrefix: string): ChatSummary {
  return {
    id: summary.id,
    title: summary.title,
    userId: summary.folder.slice(folderPrefix.length),
    createdAt: summary.createdAt,
    updatedAt: summary.updatedAt,
    messageCount: summary.messageCount,
  };
}

function cursorOf(cursor: ChatCursor): ListCursor {
  const updatedAt =
    typeof cursor?.updatedAt === 'string' ? new Date(cursor.updatedAt) : cursor?.updatedAt;
  if (!(updatedAt instanceof Date) || Number.isNaN(updatedAt.getTime())) {
    throw errors.invalid('listChats: startAfter.updatedAt must be a Date or an ISO date string');
  }
  if (typeof cursor.id !== 'string')
    throw errors.invalid('listChats: startAfter.id must be a string');
  return { updatedAt, id: cursor.id };
}
