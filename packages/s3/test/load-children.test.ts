// What a load reads for its children: the markers and the index shards, and the newest
// version of a marked session only when a write may have changed its parent without its
// entry yet (a create or a promotion whose index update failed). Steady writes of other
// sessions cost a load nothing. A delete promotes such a child too.
import type { S3Client } from '@aws-sdk/client-s3';
import { type Message, newSessionId } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { openS3Store } from '../src/index.js';
import { storeOn, useTarget } from './harness.js';
import { testClient } from './support/s3-server.js';

const server = useTarget();

const msg = (content: string): Message => ({ role: 'user', content });

type Send = (command: unknown, options?: unknown) => Promise<unknown>;

/**
 * A client that records the keys it reads while `log.on`, and fails (503) every write of
 * an index shard while `log.failIndex`.
 */
function recordingClient(
  endpoint: string,
  log: { on: boolean; failIndex: boolean; reads: string[] },
): S3Client {
  const client = testClient(endpoint);
  const send = client.send.bind(client) as Send;
  (client as unknown as { send: Send }).send = (command, options) => {
    const input = (command as { input?: { Key?: string; Prefix?: string; Body?: unknown } }).input;
    const key = input?.Key ?? `LIST ${input?.Prefix ?? ''}`;
    const write = input?.Body !== undefined;
    if (log.on && !write) log.reads.push(key.replace(/^.*?\/(s|index|pending)\//, '$1/'));
    if (write && log.failIndex && /\/index\/\d+\.json$/.test(key)) {
      return Promise.reject(
        Object.assign(new Error('injected: the index shard write failed'), {
          name: 'ServiceUnavailable',
          $metadata: { httpStatusCode: 503 },
        }),
      );
    }
    return send(command, options);
  };
  return client;
}

describe("a load's children", () => {
  it('cost no read of the other sessions written in the last seconds', async () => {
    const log = { on: false, failIndex: false, reads: [] as string[] };
    const writer = await storeOn(server.target);
    const client = recordingClient(server.target.endpoint, log);
    const reader = await openS3Store({
      client,
      bucket: server.target.bucket,
      prefix: writer.prefix,
    });
    const a = await writer.create({ id: newSessionId(), messages: [msg('a')] });
    const others = [];
    for (let k = 0; k < 3; k++) others.push(await writer.create({ id: newSessionId() }));
    // Every session has its writer's marker up now.
    for (const s of [a, ...others]) await writer.commit(s.id, { append: [msg('more')] });
    log.on = true;
    const loaded = await reader.load(a.id);
    log.on = false;
    expect(loaded.messages).toEqual([msg('a'), msg('more')]);
    expect(log.reads.filter((k) => k.startsWith('s/') && !k.startsWith(`s/${a.id}/`))).toEqual([]);
    // The head, the version past it (absent), the base and the part, the markers, 4 shards.
    expect(log.reads).toHaveLength(4 + 1 + 4);
    await reader.close();
    await writer.close();
    client.destroy();
  });

  it('include a branch and a promoted child whose index entries failed to be written', async () => {
    const log = { on: false, failIndex: false, reads: [] as string[] };
    const client = recordingClient(server.target.endpoint, log);
    const store = await openS3Store({
      client,
      bucket: server.target.bucket,
      prefix: (await storeOn(server.target)).prefix,
    });
    const other = await storeOn(server.target, store.prefix);
    const root = await store.create({ id: newSessionId(), messages: [msg('r0'), msg('r1')] });
    const middle = await store.branch(root.id, 1);
    log.failIndex = true;
    // Created while the index cannot be written: the branch resolves, its marker stays up.
    const leaf = await store.branch(middle.id, 1);
    expect((await other.load(middle.id)).children).toEqual([leaf.id]);
    log.failIndex = false;
    const before = (await other.load(root.id)).children;
    expect(before).toEqual([middle.id]);
    // Deleting the middle promotes the leaf to the root; its entry's update fails.
    log.failIndex = true;
    await store.delete(middle.id);
    log.failIndex = false;
    expect((await other.load(root.id)).children).toEqual([leaf.id]);
    expect((await other.load(leaf.id)).parentId).toBe(root.id);
    // list heals the entries: the same children there.
    const listed = (await other.list()).find((x) => x.id === root.id);
    expect(listed?.children).toEqual([leaf.id]);
    await other.close();
    await store.close();
    client.destroy();
  });
});
