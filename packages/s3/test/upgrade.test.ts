// A bucket written by the previous release: its search-text objects hold one string per
// version (format 1), computed by a reading of message text that did not know `parts`
// (the AI SDK's UIMessage, Mastra's content.parts), and its heads record no operation ids.
// The store rebuilds such text on first use (a query that reaches it) and in `repair()`,
// and commits with operation ids and truncation work on such sessions at once.
import type { S3Client } from '@aws-sdk/client-s3';
import { type Message, newSessionId } from '@sessionkit/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3Store } from '../src/index.js';
import { releaseClient, storeOn } from './harness.js';
import { readHead, readRaw, textKey, writeRaw } from './raw.js';
import { type S3Target, startTarget, testClient } from './support/s3-server.js';

let target: S3Target;
let raw: S3Client;
beforeAll(async () => {
  target = await startTarget();
  raw = testClient(target.endpoint);
});
afterAll(async () => {
  raw?.destroy();
  if (target) releaseClient(target);
  await target?.stop();
});

/** A UIMessage: its text is only in `parts`. */
const ui = (text: string) =>
  ({ id: text, role: 'user', parts: [{ type: 'text', text }] }) as unknown as Message;

/**
 * A session as the previous release left it: version 1 holds `messages`, its text object
 * is format 1 with the old reading (no text from `parts`), and its head has no
 * `operations` (the previous release wrote none).
 */
async function previousReleaseSession(store: S3Store, text: string): Promise<string> {
  const s = await store.create({ id: newSessionId(), title: 'old', messages: [ui(text)] });
  const head = await readHead(raw, store, s.id);
  await writeRaw(raw, store, textKey(s.id, head.gen, 1), JSON.stringify({ format: 1, text: '' }));
  const stored = JSON.parse((await readRaw(raw, store, `s/${s.id}/head`)) ?? '{}');
  expect(stored.operations).toBeUndefined();
  return s.id;
}

describe('upgrade from the previous release', () => {
  it('a query rebuilds the old search text on first use and finds parts text', async () => {
    const store = await storeOn(target);
    const id = await previousReleaseSession(store, 'Marmalade from parts');
    expect((await store.list({ query: 'marmalade' })).map((s) => s.id)).toEqual([id]);
    const head = await readHead(raw, store, id);
    const rebuilt = JSON.parse((await readRaw(raw, store, textKey(id, head.gen, 1))) ?? '{}');
    expect(rebuilt).toEqual({ format: 2, texts: ['marmalade from parts'] });
    await store.close();
  });

  it('repair() rewrites every old search-text object', async () => {
    const store = await storeOn(target);
    const ids = [
      await previousReleaseSession(store, 'Quince one'),
      await previousReleaseSession(store, 'Quince two'),
    ];
    const report = await store.repair();
    expect(report.skippedCorrupt).toEqual([]);
    expect(report.indexEntriesFixed).toBe(2);
    for (const id of ids) {
      const head = await readHead(raw, store, id);
      const text = JSON.parse((await readRaw(raw, store, textKey(id, head.gen, 1))) ?? '{}');
      expect(text.format).toBe(2);
    }
    // Nothing left to rebuild: a query reads no message body.
    const before = store.stats.bodyReads;
    expect((await store.list({ query: 'quince' })).map((s) => s.id).sort()).toEqual(ids.sort());
    expect(store.stats.bodyReads).toBe(before);
    await store.close();
  });

  it('an old session takes operation ids and truncation at once', async () => {
    const store = await storeOn(target);
    const id = await previousReleaseSession(store, 'Damson');
    const input = { operationId: 'first-new', append: [ui('Greengage')] };
    const first = await store.commit(id, input);
    expect(await store.commit(id, input)).toEqual(first);
    await store.commit(id, { truncate: 1 });
    expect((await store.load(id)).messages).toEqual([ui('Damson')]);
    expect(await store.list({ query: 'greengage' })).toEqual([]);
    expect((await store.list({ query: 'damson' })).map((s) => s.id)).toEqual([id]);
    await store.close();
  });
});
