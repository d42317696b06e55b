// What doctor can learn about a store beyond the contracts: the stored format or schema
// version, read from what the adapter package exports and the store exposes.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { listRows, type Store } from '@sessionkit/core';
import type { OpenedStore } from '../runtime/open.js';

/** The store's format or schema version, as a sentence. */
export async function formatVersionOf(opened: OpenedStore): Promise<string> {
  const exports = opened.adapter?.exports ?? {};
  const store = opened.store as unknown as { dir?: unknown; schema?: unknown };
  if (typeof store.dir === 'string' && typeof exports.FORMAT_VERSION === 'number') {
    const wanted = `${String(exports.FORMAT_NAME ?? 'format')} version ${exports.FORMAT_VERSION}`;
    try {
      const stored = JSON.parse(await readFile(join(store.dir, 'format.json'), 'utf8')) as {
        format?: unknown;
        version?: unknown;
      };
      return `${String(stored.format)} version ${String(stored.version)} on disk (this adapter writes ${wanted})`;
    } catch {
      return `no format file yet (created on the first write; this adapter writes ${wanted})`;
    }
  }
  if (typeof store.schema === 'string' && typeof exports.LATEST_VERSION === 'number') {
    return `schema "${store.schema}" at version ${exports.LATEST_VERSION} (migrated on open)`;
  }
  return 'not reported by this adapter';
}

/** Counts from one pass over the listing (summaries only: no message bodies are read). */
export interface StoreCounts {
  sessions: number;
  roots: number;
  branches: number;
  archived: number;
  messages: number;
}

/** Walks the listing once and counts; `onScan` is called every 1000 sessions and at the end. */
export async function countStore(
  store: Store,
  signal: AbortSignal,
  onScan: (done: number) => void,
): Promise<StoreCounts> {
  const counts: StoreCounts = { sessions: 0, roots: 0, branches: 0, archived: 0, messages: 0 };
  for await (const row of listRows(store, { pageSize: 1000, where: 'doctor' })) {
    signal.throwIfAborted();
    counts.sessions++;
    if (row.parentId) counts.branches++;
    else counts.roots++;
    if (row.archivedAt) counts.archived++;
    counts.messages += row.messageCount;
    if (counts.sessions % 1000 === 0) onScan(counts.sessions);
  }
  onScan(counts.sessions);
  return counts;
}
