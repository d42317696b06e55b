// Format 1 (one `session.json` per session), read in place and migrated on the next write.

import type { JsonValue } from '@sessionkit/core';
import { type HeaderJson, headerProblem } from './records.js';

/** A version-1 `session.json` as the seed's simple format wrote it (ISO dates). */
export interface LegacySessionJson {
  version: 1;
  id: string;
  title?: string;
  folder?: string;
  parentId?: string;
  createdAt: string;
  updatedAt: string;
  model?: string;
  provider?: string;
  tokenCount?: number;
  costUsd?: number;
  turnCount?: number;
  metadata?: Record<string, string>;
  status?: string;
  messages: unknown[];
  branchedAtTurn?: number;
  revision?: number;
  archivedAt?: string;
  mode?: string;
  state?: JsonValue;
}

/** Migrates a version-1 session file to a header and messages. Throws on a bad file. */
export function migrateLegacy(
  raw: unknown,
  id: string,
): { header: HeaderJson; messages: unknown[] } {
  const s = raw as Partial<LegacySessionJson>;
  if (typeof s !== 'object' || s === null || s.version !== 1) {
    throw new Error('session.json is not a version-1 session');
  }
  if (!Array.isArray(s.messages)) throw new Error('session.json has no messages array');
  const createdAt = Date.parse(String(s.createdAt));
  const updatedAt = Date.parse(String(s.updatedAt));
  if (!Number.isFinite(createdAt) || !Number.isFinite(updatedAt))
    throw new Error('session.json has bad dates');
  const header: HeaderJson = {
    id,
    title: s.title ?? '',
    folder: s.folder ?? '',
    createdAt,
    updatedAt,
    model: s.model ?? '',
    provider: s.provider ?? '',
    tokenCount: s.tokenCount ?? 0,
    costUsd: s.costUsd ?? 0,
    turnCount: s.turnCount ?? 0,
    metadata: { ...(s.metadata ?? {}) },
    status: s.status ?? 'active',
    revision: s.revision ?? 1,
  };
  if (s.parentId !== undefined) header.parentId = s.parentId;
  if (s.branchedAtTurn !== undefined) header.branchedAtTurn = s.branchedAtTurn;
  if (s.archivedAt !== undefined) header.archivedAt = Date.parse(s.archivedAt);
  if (s.mode !== undefined) header.mode = s.mode;
  if (s.state !== undefined) header.state = s.state;
  const problem = headerProblem(header, id);
  if (problem) throw new Error(problem);
  return { header, messages: s.messages };
}
