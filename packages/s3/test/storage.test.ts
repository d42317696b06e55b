// Bounded storage: after folds, superseded version, text and snapshot objects are removed
// (README "Storage"), and readers racing the removal still read one committed state whole.
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { type Message, newSessionId } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { openS3Store, type S3Store } from '../src/index.js';
import { freshPrefix, sharedClient, useTarget } from './harness.js';
import { testClient } from './support/s3-server.js';

const server = useTarget();

/**
 * A short grace, so removals happen within a test's run; long enough for a writer to land
 * its version within half of it on a loaded test machine.
 */
const GRACE_MS = 5000;

const msg = (content: string): Message => ({ role: 'user', content });

/** Keys and sizes of every object of session `id` under the store's prefix. */
async function objectsOf(
  store: S3Store,
  id: string,
): Promise<Array<{ key: string; size: number }>> {
  const out: Array<{ key: string; size: number }> = [];
  let token: string | undefined;
  do {
    const page = await server.raw.send(
      new ListObjectsV2Command({
        Bucket: store.bucket,
        Prefix: `${store.prefix}s/${id}/`,
        ContinuationToken: token,
      }),
    );
    for (const o of page.Contents ?? [])
      out.push({ key: (o.Key ?? '').slice(store.prefix.length), size: o.Size ?? 0 });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

const versionsIn = (keys: Array<{ key: string }>) =>
  keys.filter((k) => /\/v\/\d+$/.test(k.key)).length;

/**
 * A client whose GETs of message-holding objects (versions, snapshots) and search texts
 * wait up to 120 ms first, so readers hold old states while the writers fold and remove;
 * counts the GETs that found the object gone.
 */
function slowReadingClient(endpoint: string, seen: { gone: number }): S3Client {
  const client = testClient(endpoint);
  const send = client.send.bind(client) as (
    command: unknown,
    options?: unknown,
  ) => Promise<unknown>;
  (client as unknown as { send: typeof send }).send = async (command, options) => {
    const input = (command as { input?: { Key?: string; Body?: unknown } }).input;
    const key = input?.Key ?? '';
    const held = input?.Body === undefined && /\/(v|f|t|ft)\/\d+$/.test(key);
    if (held) await new Promise((r) => setTimeout(r, Math.random() * 120));
    try {
      return await send(command, options);
    } catch (e) {
      if (
        held &&
        (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404
      )
        seen.gone++;
      throw e;
    }
  };
  return client;
}

describe('superseded objects are removed after folds', () => {
  it('readers racing folds and removals read committed prefixes, whole', {
    timeout: 180_000,
  }, async () => {
    const prefix = freshPrefix(server.target);
    const writers = await Promise.all(
      [0, 1].map(() =>
        openS3Store({
          client: testClient(server.target.endpoint),
          bucket: server.target.bucket,
          prefix,
          pruneGraceMs: GRACE_MS,
        }),
      ),
    );
    const seen = { gone: 0 };
    const readerClient = slowReadingClient(server.target.endpoint, seen);
    const reader = await openS3Store({
      client: readerClient,
      bucket: server.target.bucket,
      prefix,
    });
    const w0 = writers[0] as S3Store;
    const s = await w0.create({ id: newSessionId(), title: 'race', messages: [msg('zero')] });

    // Two writers append one message per commit, until the versions of at least two folds
    // were removed. That takes the grace, however fast commits are, so the bound is in time
    // as well as in count: at most 2,000 commits or 60 s.
    let done = false;
    let commits = 0;
    let removed = false;
    const deadline = Date.now() + 60_000;
    const write = async (w: S3Store, who: number) => {
      for (let k = 0; !done && commits < 2000 && Date.now() < deadline; k++) {
        await w.commit(s.id, { append: [msg(`w${who} turn ${k} lemur`)] });
        commits++;
        if (commits % 20 === 0 && !removed) {
          const keys = await objectsOf(w, s.id);
          removed = versionsIn(keys) < commits + 1 - 2 * 32;
          if (removed) done = true;
        }
      }
      done = true;
    };

    // What readers saw: every load, window and summary, checked against the final history.
    const loads: Message[][] = [];
    const windows: Message[][] = [];
    const summaries: Array<{ count: number; rev: number }> = [];
    const read = async () => {
      while (!done) {
        const [loaded, window, listed] = await Promise.all([
          reader.load(s.id),
          reader.loadMessages(s.id, { last: 5 }),
          reader.list({ limit: 10 }),
        ]);
        // After the load: the search text of what it read is there to find.
        const found = await reader.list({ query: 'lemur', limit: 10 });
        expect(loaded.revision).toBe(loaded.messages.length);
        loads.push(loaded.messages);
        windows.push(window);
        const summary = listed.find((x) => x.id === s.id);
        if (summary) summaries.push({ count: summary.messageCount, rev: summary.revision });
        if (loaded.messages.length > 1) expect(found.map((x) => x.id)).toContain(s.id);
      }
    };
    await Promise.all([write(w0, 0), write(writers[1] as S3Store, 1), read(), read()]);
    expect(removed).toBe(true);

    const final = (await w0.load(s.id)).messages;
    expect(final).toHaveLength(commits + 1);
    for (const messages of loads) expect(messages).toEqual(final.slice(0, messages.length));
    const contents = final.map((m) => m.content);
    for (const w of windows) {
      // The last five messages of one committed state (messages are unique).
      const end = contents.indexOf(w.at(-1)?.content ?? '') + 1;
      expect(end).toBeGreaterThan(0);
      expect(w).toEqual(final.slice(Math.max(0, end - 5), end));
    }
    for (const x of summaries) expect(x.rev).toBe(x.count);
    expect(loads.length).toBeGreaterThan(0);
    console.info(
      `race: ${commits} commits, ${loads.length} loads, ${windows.length} windows, ${seen.gone} reads met a removed object`,
    );
    // Nothing left for repair to fix, nothing unreadable, once the stores' work off their
    // callers' paths (search texts, index entries: `close()` waits for it) has ended; a
    // repair while it is in flight would count what it is about to write as a fix.
    for (const w of writers) await w.close();
    await reader.close();
    readerClient.destroy();
    const checker = await openS3Store({
      client: testClient(server.target.endpoint),
      bucket: server.target.bucket,
      prefix,
    });
    expect(await checker.repair()).toMatchObject({ skippedCorrupt: [], indexEntriesFixed: 0 });
    await checker.close();
  });

  it('removes the texts and snapshots before the newest fold, and versions after the grace', async () => {
    const store = await openS3Store({
      client: sharedClient(server.target),
      bucket: server.target.bucket,
      prefix: freshPrefix(server.target),
      pruneGraceMs: GRACE_MS,
    });
    const s = await store.create({ id: newSessionId(), title: 'bytes' });
    const all: Message[] = [];
    // Versions 2–71. Version 33 is folded (its witness written), then the grace passes, then
    // 65 is folded; version 66, the first after that fold, removes what the two superseded.
    for (let v = 2; v <= 71; v++) {
      const m = msg(`turn ${v}`);
      all.push(m);
      await store.commit(s.id, { append: [m] });
      // The folds and removals run in the background: each commit starts after them.
      await store.settled();
      if (v === 40) await new Promise((r) => setTimeout(r, GRACE_MS + 1500));
    }
    const keys = (await objectsOf(store, s.id)).map((k) => k.key.replace(/^.*\/g\/[^/]+\//, ''));
    const numbered = (kind: string) =>
      keys.filter((k) => k.startsWith(`${kind}/`)).map((k) => Number(k.slice(kind.length + 1)));
    const from = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
    // Versions up to the aged witness (33) are gone, the later ones stay (the witness of 65
    // is younger than the grace); texts up to the newest fold (65) and older snapshots too.
    expect(numbered('v')).toEqual(from(34, 71));
    expect(numbered('t')).toEqual(from(66, 71));
    expect(numbered('f')).toEqual([65]);
    expect(numbered('ft')).toEqual([65]);
    expect(numbered('w')).toEqual([33, 65]);
    expect((await store.load(s.id)).messages).toEqual(all);
    expect(await store.loadMessages(s.id, { offset: 30, limit: 5 })).toEqual(all.slice(30, 35));
    expect((await store.list({ query: 'turn 3' })).map((x) => x.id)).toEqual([s.id]);
    await store.close();
  });
});
