// Faults: a writer that dies between its version object and its index update, an index
// update that fails after its write landed, the server stopped mid-run, and eight writers
// racing on one session through the proxy.
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import {
  isSessionKitError,
  type Message,
  newSessionId,
  type SessionKitError,
} from '@sessionkit/core';
import { describe, expect, it, vi } from 'vitest';
import { openS3Store, type S3Store } from '../src/index.js';
import { storeOn, useTarget } from './harness.js';
import { readRaw } from './raw.js';
import {
  type ConditionalWriteProxy,
  startConditionalWriteProxy,
} from './support/conditional-write-proxy.js';
import { startS3rver, TEST_BUCKET, testClient } from './support/s3-server.js';

const server = useTarget();

const msg = (content: string): Message => ({ role: 'user', content });

/**
 * A client that dies (every later request fails, as if the process were killed) right
 * after it created a version object: the write got its revision, nothing after it ran.
 */
function clientDyingAfterVersion(endpoint: string): S3Client {
  const client = testClient(endpoint);
  let dead = false;
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  (client as unknown as { send: (c: unknown) => Promise<unknown> }).send = async (command) => {
    if (dead) throw new Error('the writer process is gone');
    const out = await send(command);
    const input = (command as { input?: { Key?: string; IfNoneMatch?: string } }).input;
    if (input?.IfNoneMatch === '*' && /\/v\/\d+$/.test(input.Key ?? '')) dead = true;
    return out;
  };
  return client;
}

/**
 * A client whose next `faults.left` writes of an index shard fail (503), as when the
 * index update's retries run out under contention; every other request goes through.
 */
function clientFailingIndexWrites(endpoint: string, faults: { left: number }): S3Client {
  const client = testClient(endpoint);
  const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
  (client as unknown as { send: (c: unknown) => Promise<unknown> }).send = async (command) => {
    const input = (command as { input?: { Key?: string; Body?: unknown } }).input;
    const indexWrite = input?.Body !== undefined && /\/index\/\d+\.json$/.test(input.Key ?? '');
    if (indexWrite && faults.left > 0) {
      faults.left--;
      throw Object.assign(new Error('injected: the index shard write failed'), {
        name: 'ServiceUnavailable',
        $metadata: { httpStatusCode: 503 },
      });
    }
    return send(command);
  };
  return client;
}

/** The summary `list` gives for `id` (archived included). */
async function listed(store: S3Store, id: string) {
  const all = await store.list({ includeArchived: true, limit: 1000 });
  return all.find((s) => s.id === id);
}

describe('a writer killed between its version object and its index update', () => {
  it('leaves list truthful (healed from the write marker) and repair exact', async () => {
    const store = await storeOn(server.target);
    const s = await store.create({ id: newSessionId(), title: 'before', messages: [msg('one')] });
    const dying = await openS3Store({
      client: clientDyingAfterVersion(server.target.endpoint),
      bucket: server.target.bucket,
      prefix: store.prefix,
    });
    const died = await dying
      .commit(s.id, { append: [msg('two zebra')], patch: { title: 'after' } })
      .then(
        () => 'resolved',
        (e: unknown) => String(e),
      );
    // The store saw its client fail: to the caller it is an unavailable backend.
    expect(died).toMatch(/unavailable/);
    // The version exists; its head, search text, index entry and marker removal do not.
    expect(await readRaw(server.raw, store, `s/${s.id}/head`)).toContain('"title":"before"');
    const markers = await server.raw.send(
      new ListObjectsV2Command({
        Bucket: server.target.bucket,
        Prefix: `${store.prefix}pending/${s.id}/`,
      }),
    );
    expect(markers.KeyCount).toBe(1);

    // list tells what load tells: the committed version, not the stale index entry.
    const summary = await listed(store, s.id);
    const loaded = await store.load(s.id);
    expect(loaded.title).toBe('after');
    expect(loaded.messages).toEqual([msg('one'), msg('two zebra')]);
    const { messages, ...rest } = loaded;
    expect(summary).toEqual({ ...rest, messageCount: messages.length });
    // The missing search text is rebuilt when a query needs it.
    expect((await store.list({ query: 'zebra' })).map((x) => x.id)).toEqual([s.id]);
    // repair finds nothing left to fix, and a second run neither.
    const report = await store.repair();
    expect(report).toEqual({ rebuilt: 1, skippedCorrupt: [], indexEntriesFixed: 0 });
    expect((await store.repair()).indexEntriesFixed).toBe(0);
    await store.close();
  });

  it('repair alone rebuilds the index and search text of a writer that died', async () => {
    const store = await storeOn(server.target);
    const s = await store.create({ id: newSessionId(), title: 'x', messages: [msg('first')] });
    const dying = await openS3Store({
      client: clientDyingAfterVersion(server.target.endpoint),
      bucket: server.target.bucket,
      prefix: store.prefix,
    });
    await dying.commit(s.id, { append: [msg('okapi facts')] }).catch(() => {});
    const report = await store.repair();
    // The index entry (messageCount 1 → 2) and the missing search text object.
    expect(report).toEqual({ rebuilt: 1, skippedCorrupt: [], indexEntriesFixed: 2 });
    expect((await store.repair()).indexEntriesFixed).toBe(0);
    expect((await listed(store, s.id))?.messageCount).toBe(2);
    expect((await store.list({ query: 'okapi' })).map((x) => x.id)).toEqual([s.id]);
    // The next writer continues after the dead writer's version.
    const r = await store.commit(s.id, { append: [msg('third')] });
    expect(r).toMatchObject({ revision: 3, messageCount: 3 });
    await store.close();
  });
});

describe('an index update that fails after the write landed', () => {
  it('resolves the write and keeps its marker, so list heals without repair', async () => {
    const store = await storeOn(server.target);
    const s = await store.create({
      id: newSessionId(),
      title: 'before',
      messages: [msg('one'), msg('two zebra')],
    });
    const faults = { left: 0 };
    const failing = await openS3Store({
      client: clientFailingIndexWrites(server.target.endpoint, faults),
      bucket: server.target.bucket,
      prefix: store.prefix,
    });
    const markersOf = async (id: string) =>
      (
        await server.raw.send(
          new ListObjectsV2Command({
            Bucket: server.target.bucket,
            Prefix: `${store.prefix}pending/${id}/`,
          }),
        )
      ).KeyCount;

    // The version and the head land, the index entry does not: the commit resolves with
    // its result (an error would invite a retry, which appends a second time).
    faults.left = 1;
    const r = await failing.commit(s.id, {
      truncate: 1,
      append: [msg('three')],
      patch: { title: 'after' },
    });
    // The entry is written off the commit's path: its write fails soon after.
    await vi.waitFor(() => expect(faults.left).toBe(0), { timeout: 10_000 });
    expect(r).toMatchObject({ revision: 2, messageCount: 2 });
    expect(await markersOf(s.id)).toBe(1);
    // Without repair(), another store's list tells what load tells.
    const loaded = await store.load(s.id);
    expect(loaded.messages).toEqual([msg('one'), msg('three')]);
    const { messages, ...rest } = loaded;
    expect(await listed(store, s.id)).toEqual({ ...rest, messageCount: messages.length });
    // Search reads the chain after the truncate: the dropped message is not found.
    expect((await store.list({ query: 'zebra' })).map((x) => x.id)).toEqual([]);
    expect((await store.list({ query: 'three' })).map((x) => x.id)).toEqual([s.id]);

    // A create whose first index entry fails: created (an error would say to retry,
    // which answers `exists`) and listed.
    faults.left = 1;
    const c = await failing.create({ id: newSessionId(), title: 'created' });
    expect(faults.left).toBe(0);
    expect(await markersOf(c.id)).toBe(1);
    const { messages: none, ...created } = await store.load(c.id);
    expect(await listed(store, c.id)).toEqual({ ...created, messageCount: none.length });

    // The heals wrote both entries: repair finds nothing to fix.
    expect((await store.repair()).indexEntriesFixed).toBe(0);
    await failing.close();
    await store.close();
  });
});

describe('the server stopped mid-run', () => {
  it('fails with unavailable (retryable) while it is down, then recovers', async () => {
    const s3rver = await startS3rver();
    let proxy: ConditionalWriteProxy | undefined;
    let restarted: Awaited<ReturnType<typeof startS3rver>> | undefined;
    try {
      proxy = await startConditionalWriteProxy(s3rver.port);
      const endpoint = `http://127.0.0.1:${proxy.port}`;
      const client = testClient(endpoint);
      const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
      await client.send(new CreateBucketCommand({ Bucket: TEST_BUCKET }));
      const store = await openS3Store({ client, bucket: TEST_BUCKET, prefix: 'restart' });
      const s = await store.create({ id: newSessionId(), title: 't' });
      for (let i = 0; i < 3; i++) await store.commit(s.id, { append: [msg(`m${i}`)] });

      // Both the server and the proxy go away: connection refused.
      await proxy.stop();
      await s3rver.stop();
      for (const attempt of [
        () => store.load(s.id),
        () => store.commit(s.id, { append: [msg('lost?')] }),
        () => store.list(),
      ]) {
        const e = await attempt().then(
          () => undefined,
          (x: unknown) => x as SessionKitError,
        );
        expect(isSessionKitError(e, 'unavailable')).toBe(true);
        expect(e?.retryable).toBe(true);
        expect(e?.message).not.toMatch(/S3RVER/);
      }

      // The server comes back on the same port and data; the proxy too.
      restarted = await startS3rver({ port: s3rver.port, directory: s3rver.directory });
      proxy = await startConditionalWriteProxy(restarted.port, proxy.port);
      const loaded = await store.load(s.id);
      expect(loaded.messages.slice(0, 3)).toEqual([msg('m0'), msg('m1'), msg('m2')]);
      const r = await store.commit(s.id, { append: [msg('after')] });
      expect((await store.load(s.id)).messages.at(-1)).toEqual(msg('after'));
      expect(r.messageCount).toBe(loaded.messages.length + 1);
      await store.close();
      client.destroy();
    } finally {
      await proxy?.stop().catch(() => {});
      await (restarted ?? s3rver).dispose();
      await s3rver.dispose();
    }
  });
});

describe('eight writers racing on one session through the proxy', () => {
  it('one winner per revision on a shared expectedRevision, every unconditional append kept', async () => {
    // Eight store instances, each with a client (and connections) of its own.
    const clients = Array.from({ length: 8 }, () => testClient(server.target.endpoint));
    const prefix = `${server.target.runPrefix}race-${newSessionId()}/`;
    const writers = await Promise.all(
      clients.map((client) => openS3Store({ client, bucket: server.target.bucket, prefix })),
    );
    const first = writers[0] as S3Store;
    const s = await first.create({ id: newSessionId(), title: 'race' });

    // Three rounds of eight conditional commits on the same revision: exactly one wins.
    for (let round = 0; round < 3; round++) {
      const { revision } = await first.load(s.id);
      const results = await Promise.allSettled(
        writers.map((w, i) =>
          w.commit(s.id, { expectedRevision: revision, append: [msg(`r${round}w${i}`)] }),
        ),
      );
      const ok = results.filter((x) => x.status === 'fulfilled');
      const conflicts = results.filter(
        (x) => x.status === 'rejected' && isSessionKitError(x.reason, 'conflict'),
      );
      expect(ok).toHaveLength(1);
      expect(conflicts).toHaveLength(7);
      expect((ok[0] as PromiseFulfilledResult<{ revision: number }>).value.revision).toBe(
        revision + 1,
      );
    }

    // Eight writers, five unconditional appends each: all forty kept, once each.
    await Promise.all(
      writers.map(async (w, i) => {
        for (let k = 0; k < 5; k++) await w.commit(s.id, { append: [msg(`w${i}k${k}`)] });
      }),
    );
    const loaded = await first.load(s.id);
    const appended = loaded.messages.slice(3).map((m) => m.content as string);
    expect(appended.sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => Array.from({ length: 5 }, (_, k) => `w${i}k${k}`))
        .flat()
        .sort(),
    );
    expect(loaded.revision).toBe(1 + 3 + 40);
    // One version object per revision: no revision was written twice.
    const versions = await server.raw.send(
      new ListObjectsV2Command({
        Bucket: server.target.bucket,
        Prefix: `${first.prefix}s/${s.id}/g/`,
      }),
    );
    const versionKeys = (versions.Contents ?? []).filter((c) => /\/v\/\d+$/.test(c.Key ?? ''));
    expect(versionKeys).toHaveLength(44);
    if (server.target.proxy)
      expect(
        server.target.proxy.counts.preconditionFailed + server.target.proxy.counts.conflicts,
      ).toBeGreaterThan(0);
    expect(await listed(first, s.id)).toMatchObject({ revision: 44, messageCount: 43 });
    for (const w of writers) await w.close();
    for (const c of clients) c.destroy();
  });
});
