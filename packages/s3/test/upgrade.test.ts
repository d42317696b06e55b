// A bucket written by the previous release: its search-text objects hold one string per
// version (format 1), computed by a reading of message text that did not know `parts`
// (the AI SDK's UIMessage, Mastra's content.parts), and its heads record no operation ids.
// The store rebuilds such text on first use (a query that reaches it) and in `repair()`,
// and commits with operation ids and truncation work on such sessions at once.
import { readFileSync } from 'node:fs';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { type Message, newSessionId } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { openS3Store, type S3Store } from '../src/index.js';
import { decodeSearchTexts } from '../src/search-text.js';
import { freshPrefix, sharedClient, storeOn, useTarget } from './harness.js';
import { foldTextKey, readHead, readRaw, readRawBytes, textKey, writeRaw } from './raw.js';

const server = useTarget();

/** A search-text object as stored: compressed (format 3) or not, and the texts it holds. */
async function storedTexts(store: S3Store, key: string) {
  const bytes = await readRawBytes(server.raw, store, key);
  if (bytes === undefined) return undefined;
  const compressed = Buffer.from(bytes).subarray(0, 12).toString('latin1') === 'sktext:3:br\n';
  return { compressed, texts: await decodeSearchTexts(bytes) };
}

const idsOf = (summaries: Array<{ id: string }>) => summaries.map((s) => s.id).sort();

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
  const head = await readHead(server.raw, store, s.id);
  await writeRaw(
    server.raw,
    store,
    textKey(s.id, head.gen, 1),
    JSON.stringify({ format: 1, text: '' }),
  );
  const stored = JSON.parse((await readRaw(server.raw, store, `s/${s.id}/head`)) ?? '{}');
  expect(stored.operations).toBeUndefined();
  return s.id;
}

describe('upgrade from the previous release', () => {
  it('a query rebuilds the old search text on first use and finds parts text', async () => {
    const store = await storeOn(server.target);
    const id = await previousReleaseSession(store, 'Marmalade from parts');
    expect((await store.list({ query: 'marmalade' })).map((s) => s.id)).toEqual([id]);
    const head = await readHead(server.raw, store, id);
    expect(await storedTexts(store, textKey(id, head.gen, 1))).toEqual({
      compressed: true,
      texts: ['marmalade from parts'],
    });
    await store.close();
  });

  it('repair() rewrites every old search-text object', async () => {
    const store = await storeOn(server.target);
    const ids = [
      await previousReleaseSession(store, 'Quince one'),
      await previousReleaseSession(store, 'Quince two'),
    ];
    const report = await store.repair();
    expect(report.skippedCorrupt).toEqual([]);
    expect(report.indexEntriesFixed).toBe(2);
    for (const id of ids) {
      const head = await readHead(server.raw, store, id);
      expect(await storedTexts(store, textKey(id, head.gen, 1))).toMatchObject({
        compressed: true,
      });
    }
    // Nothing left to rebuild: a query reads no message body.
    const before = store.stats.bodyReads;
    expect((await store.list({ query: 'quince' })).map((s) => s.id).sort()).toEqual(ids.sort());
    expect(store.stats.bodyReads).toBe(before);
    await store.close();
  });

  it('an old session takes operation ids and truncation at once', async () => {
    const store = await storeOn(server.target);
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

/**
 * The objects of a bucket an earlier release wrote, uploaded under a fresh prefix.
 * `release-1.json` (made with the release before pruning): "long-session", 41 commits (a
 * fold at version 33, operation ids op-10 … op-40) then a truncation to 38 messages and one
 * more; "short-session", two versions and a rename. Its descriptor names no prune grace.
 */
async function previousReleaseBucket(fixtureName = 'release-1.json'): Promise<string> {
  const fixture = JSON.parse(
    readFileSync(new URL(`./fixtures/${fixtureName}`, import.meta.url), 'utf8'),
  ) as { objects: Record<string, string> };
  const prefix = freshPrefix(server.target);
  for (const [key, text] of Object.entries(fixture.objects)) {
    await server.raw.send(
      new PutObjectCommand({ Bucket: server.target.bucket, Key: prefix + key, Body: text }),
    );
  }
  return prefix;
}

/** Keys of the long session's objects, relative to its generation folder. */
async function generationKeys(store: S3Store, id: string, gen: string): Promise<string[]> {
  const under = `${store.prefix}s/${id}/g/${gen}/`;
  const out = await server.raw.send(
    new ListObjectsV2Command({ Bucket: server.target.bucket, Prefix: under }),
  );
  return (out.Contents ?? []).map((c) => (c.Key ?? '').slice(under.length));
}

describe('upgrade from a bucket the previous release wrote', () => {
  it('reads it as written, writes on, and removes only what is safe', async () => {
    const prefix = await previousReleaseBucket();
    const store = await openS3Store({
      client: sharedClient(server.target),
      bucket: server.target.bucket,
      prefix,
    });
    const long = await store.load('long-session');
    const answer = (t: number) => ({ role: 'assistant', content: `turn ${t} answer about kiwis` });
    const kept = [
      { role: 'user', content: 'turn 0 question' },
      ...[...Array(37)].map((_, i) => answer(i + 1)),
    ];
    expect(long.messages).toEqual([...kept, { role: 'user', content: 'after the cut' }]);
    expect(long.revision).toBe(42);
    const short = await store.load('short-session');
    expect(short).toMatchObject({ title: 'Short, renamed', revision: 2 });
    for (const s of [long, short]) {
      const { messages, ...rest } = s;
      const listed = (await store.list()).find((x) => x.id === s.id);
      expect(listed).toEqual({ ...rest, messageCount: messages.length });
    }
    expect((await store.list({ query: 'kiwis' })).map((s) => s.id)).toEqual(['long-session']);
    // An operation id the previous release recorded is still a repeat: nothing written.
    const repeat = await store.commit('long-session', {
      operationId: 'op-40',
      append: [answer(99)],
    });
    expect(repeat).toMatchObject({ revision: 41, messageCount: 41 });

    // Writes on through a fold (at version 68): the first commit after it removes the
    // previous release's texts and snapshot; its versions stay (no witness older than the
    // store's grace, 60 s: the descriptor names none).
    const more: Message[] = [];
    for (let i = 0; i < 40; i++) {
      const m = { role: 'user', content: `new ${i}` } as Message;
      more.push(m);
      await store.commit('long-session', { append: [m] });
      // The fold and the removals run in the background: each commit starts after them.
      await store.settled();
    }
    const head = await readHead(server.raw, store, 'long-session');
    expect(head.state.chain.base).toMatchObject({ folded: true, n: 68 });
    const keys = await generationKeys(store, 'long-session', head.gen);
    expect(keys.filter((k) => k.startsWith('v/'))).toHaveLength(82);
    expect(keys.filter((k) => /^(f|ft)\//.test(k))).toEqual([
      `f/${'68'.padStart(12, '0')}`,
      `ft/${'68'.padStart(12, '0')}`,
    ]);
    expect(keys.filter((k) => k.startsWith('t/')).map((k) => Number(k.slice(2)))).toEqual(
      Array.from({ length: 82 - 68 }, (_, i) => 69 + i),
    );
    const after = await store.load('long-session');
    expect(after.messages).toEqual([...long.messages, ...more]);
    expect(
      JSON.parse((await readRaw(server.raw, store, 'sessionkit.json')) ?? '{}').pruneGraceMs,
    ).toBeUndefined();
    expect(await store.repair()).toMatchObject({ skippedCorrupt: [], indexEntriesFixed: 0 });
    await store.close();
  });
});

describe('search text written before it was compressed', () => {
  it('is read as it is, not rebuilt, and repair keeps it', async () => {
    const store = await storeOn(server.target);
    const s = await store.create({ id: newSessionId(), title: 'x', messages: [ui('Elderberry')] });
    await store.commit(s.id, { append: [ui('Rowan berry')] });
    // Its text objects as the previous code wrote them: uncompressed JSON, format 2.
    const head = await readHead(server.raw, store, s.id);
    await writeRaw(
      server.raw,
      store,
      textKey(s.id, head.gen, 1),
      '{"format":2,"texts":["elderberry"]}',
    );
    await writeRaw(
      server.raw,
      store,
      textKey(s.id, head.gen, 2),
      '{"format":2,"texts":["rowan berry"]}',
    );
    const before = store.stats.bodyReads;
    expect(idsOf(await store.list({ query: 'rowan' }))).toEqual([s.id]);
    expect(idsOf(await store.list({ query: 'elderberry' }))).toEqual([s.id]);
    expect(await store.list({ query: 'juniper' })).toEqual([]);
    expect(store.stats.bodyReads).toBe(before);
    expect(await store.repair()).toMatchObject({ skippedCorrupt: [], indexEntriesFixed: 0 });
    expect(await storedTexts(store, textKey(s.id, head.gen, 2))).toEqual({
      compressed: false,
      texts: ['rowan berry'],
    });
    await store.close();
  });

  it('a bucket of that release (release-2.json) is searched as it is, then written on', async () => {
    // release-2.json, made with the release before compressed search text (grace 1 s):
    // "long-session", created then 40 commits (a fold at 33; its texts ft/33 and t/34 … 41
    // uncompressed); "short-session", two versions and a rename.
    const prefix = await previousReleaseBucket('release-2.json');
    const client = sharedClient(server.target);
    const store = await openS3Store({ client, bucket: server.target.bucket, prefix });
    const turn = (t: number) => ({
      role: 'assistant',
      content: `Turn ${t} answer about Persimmons, ünïcode ${t % 3 === 0 ? 'Tamarind' : 'plain'}`,
    });
    const old = [
      { role: 'user', content: 'Turn 0 question about Persimmons' },
      ...Array.from({ length: 40 }, (_, i) => turn(i + 1)),
    ];
    expect((await store.load('long-session')).messages).toEqual(old);
    const before = store.stats.bodyReads;
    const found = async (query: string) => idsOf(await store.list({ query }));
    expect(await found('persimmons')).toEqual(['long-session']);
    expect(await found('tamarind')).toEqual(['long-session']);
    expect(await found('turn 40 answer')).toEqual(['long-session']);
    expect(await found('turn 41')).toEqual([]);
    expect(await found('loquat')).toEqual(['short-session']);
    expect(await found('ÜNÏCODE')).toEqual(['long-session']);
    expect(store.stats.bodyReads).toBe(before);
    const { gen } = await readHead(server.raw, store, 'long-session');
    expect(await storedTexts(store, foldTextKey('long-session', gen, 33))).toMatchObject({
      compressed: false,
    });

    // On through the next fold (version 65) and the removal after it (version 66).
    const fresh = Array.from({ length: 25 }, (_, i) => ui(`Fresh ${i} medlar`));
    for (const m of fresh) {
      await store.commit('long-session', { append: [m] });
      // The fold and the removal run in the background: each commit starts after them.
      await store.settled();
    }
    const head = await readHead(server.raw, store, 'long-session');
    expect(head.state.chain.base).toMatchObject({ folded: true, n: 65 });
    const fold = await storedTexts(store, foldTextKey('long-session', gen, 65));
    expect(fold?.compressed).toBe(true);
    expect(fold?.texts?.slice(0, 2)).toEqual([
      'turn 0 question about persimmons',
      old[1]?.content.toLowerCase(),
    ]);
    expect(await storedTexts(store, textKey('long-session', gen, 66))).toEqual({
      compressed: true,
      texts: ['fresh 24 medlar'],
    });
    // The uncompressed texts went with what the fold superseded.
    expect(await storedTexts(store, foldTextKey('long-session', gen, 33))).toBeUndefined();
    expect(await storedTexts(store, textKey('long-session', gen, 41))).toBeUndefined();
    expect((await store.load('long-session')).messages).toEqual([...old, ...fresh]);
    const after = store.stats.bodyReads;
    expect(await found('persimmons')).toEqual(['long-session']);
    expect(await found('fresh 3 medlar')).toEqual(['long-session']);
    expect(await found('fresh 25')).toEqual([]);
    expect(store.stats.bodyReads).toBe(after);
    expect(await store.repair()).toMatchObject({ skippedCorrupt: [], indexEntriesFixed: 0 });
    await store.close();
  });
});
