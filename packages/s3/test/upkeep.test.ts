// A session's storage upkeep runs off the commit path: the commit that makes a chain long
// resolves after its version PUT and head move, the fold and the removal of what it
// superseded follow in the background (coalesced per session, bounded in number), a
// store that dies in the middle of a fold leaves the session readable, and `close()`
// waits for upkeep under way.
import type { S3Client } from '@aws-sdk/client-s3';
import { type Message, newSessionId } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { FOLD_AFTER } from '../src/fold.js';
import { openS3Store } from '../src/index.js';
import { OffPathWork, UPKEEP_CONCURRENCY } from '../src/off-path.js';
import { freshPrefix, storeOn, useTarget } from './harness.js';
import { foldKey, readHead, readRaw } from './raw.js';
import { testClient } from './support/s3-server.js';

const server = useTarget();

const msg = (content: string): Message => ({ role: 'user', content });

type Send = (command: unknown, options?: unknown) => Promise<unknown>;

/** A test client whose requests go through `around` (given the key, body and the send). */
function clientAround(
  endpoint: string,
  around: (key: string, isWrite: boolean, send: () => Promise<unknown>) => Promise<unknown>,
): S3Client {
  const client = testClient(endpoint);
  const send = client.send.bind(client) as Send;
  (client as unknown as { send: Send }).send = (command, options) => {
    const input = (command as { input?: { Key?: string; Body?: unknown } }).input;
    return around(input?.Key ?? '', input?.Body !== undefined, () => send(command, options));
  };
  return client;
}

/** A promise that holds the reads awaiting it until `release()`. */
function heldGate(): { gate: Promise<void>; release: () => void } {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { gate, release };
}

/** Keys of the store's objects relative to the session's generation folder. */
const inGeneration = (key: string) => key.replace(/^.*\/g\/[^/]+\//, '');

describe('the fold runs off the commit path', () => {
  it('the commit that makes the chain long resolves while its fold is still reading', async () => {
    // The fold's first read is of version 1 (the chain's base), which no commit reads.
    const { gate, release } = heldGate();
    let holding = false;
    let heldReads = 0;
    const sent: string[] = [];
    const client = clientAround(server.target.endpoint, async (key, isWrite, send) => {
      if (holding) sent.push(`${isWrite ? 'PUT' : 'GET'} ${inGeneration(key)}`);
      if (holding && !isWrite && key.endsWith('/v/000000000001')) {
        heldReads++;
        await gate;
      }
      return send();
    });
    const prefix = freshPrefix(server.target);
    const store = await openS3Store({ client, bucket: server.target.bucket, prefix });
    const s = await store.create({ id: newSessionId(), messages: [msg('m0')] });
    for (let i = 1; i < FOLD_AFTER; i++) await store.commit(s.id, { append: [msg(`m${i}`)] });
    holding = true;
    // Released after 10 s at the latest, so that a commit that waits for its fold ends.
    const bound = setTimeout(release, 10_000);
    let released = false;
    void gate.then(() => {
      released = true;
    });
    const result = await store.commit(s.id, { append: [msg(`m${FOLD_AFTER}`)] });
    const resolvedWhileHeld = !released;
    const beforeResolve = [...sent];
    release();
    clearTimeout(bound);
    expect(result).toMatchObject({ revision: FOLD_AFTER + 1, messageCount: FOLD_AFTER + 1 });
    expect(resolvedWhileHeld).toBe(true);
    expect(heldReads).toBe(1);
    // Before it resolved: its version and head, no snapshot, witness or second head write.
    expect(beforeResolve.filter((r) => r.startsWith('PUT ') && /\/(f|ft|w)\//.test(r))).toEqual([]);
    expect(beforeResolve.filter((r) => r.startsWith('PUT ') && r.endsWith('/head'))).toHaveLength(
      1,
    );
    // close() waits for the fold: the head names the snapshot once it resolved.
    await store.close();
    const head = await readHead(server.raw, store, s.id);
    expect(head.state.chain.base).toMatchObject({ folded: true, n: FOLD_AFTER + 1 });
    const reader = await storeOn(server.target, prefix);
    const loaded = await reader.load(s.id);
    expect(loaded.messages.map((m) => m.content)).toEqual(
      Array.from({ length: FOLD_AFTER + 1 }, (_, i) => `m${i}`),
    );
    await reader.close();
    client.destroy();
  });

  it('the next commit starts on the snapshot, and the one after that removes what it superseded', async () => {
    const store = await openS3Store({
      client: testClient(server.target.endpoint),
      bucket: server.target.bucket,
      prefix: freshPrefix(server.target),
      pruneGraceMs: 1000,
    });
    const s = await store.create({ id: newSessionId(), messages: [msg('m0')] });
    for (let i = 1; i <= FOLD_AFTER; i++) await store.commit(s.id, { append: [msg(`m${i}`)] });
    await store.settled();
    await store.commit(s.id, { append: [msg('after')] });
    const head = await readHead(server.raw, store, s.id);
    // Written on the fold by this store, whatever the fold's own head move did.
    expect(head.n).toBe(FOLD_AFTER + 2);
    expect(head.state.chain).toEqual({
      base: { n: FOLD_AFTER + 1, folded: true, count: FOLD_AFTER + 1 },
      parts: [{ n: FOLD_AFTER + 2, end: FOLD_AFTER + 2 }],
    });
    await store.settled();
    // The texts the snapshot superseded went in the background (versions wait for the grace).
    expect(await readRaw(server.raw, store, `s/${s.id}/g/${head.gen}/t/000000000002`)).toBe(
      undefined,
    );
    expect(await readRaw(server.raw, store, foldKey(s.id, head.gen, FOLD_AFTER + 1))).toBeDefined();
    expect((await store.load(s.id)).messages).toHaveLength(FOLD_AFTER + 2);
    await store.close();
  });
});

describe('a fold taken up late', () => {
  it('still removes what it superseded, on the first commit written on it', async () => {
    const { gate, release } = heldGate();
    let holding = false;
    const client = clientAround(server.target.endpoint, async (key, isWrite, send) => {
      if (holding && !isWrite && key.endsWith('/v/000000000001')) await gate;
      return send();
    });
    const store = await openS3Store({
      client,
      bucket: server.target.bucket,
      prefix: freshPrefix(server.target),
      pruneGraceMs: 1000,
    });
    const s = await store.create({ id: newSessionId(), messages: [msg('m0')] });
    for (let i = 1; i < FOLD_AFTER; i++) await store.commit(s.id, { append: [msg(`m${i}`)] });
    holding = true;
    const bound = setTimeout(release, 10_000);
    // The fold's commit and three more while the fold cannot read its chain.
    for (let i = 0; i < 4; i++) await store.commit(s.id, { append: [msg(`late ${i}`)] });
    release();
    clearTimeout(bound);
    await store.settled();
    await store.commit(s.id, { append: [msg('on the fold')] });
    await store.settled();
    const head = await readHead(server.raw, store, s.id);
    expect(head.n).toBe(FOLD_AFTER + 5);
    expect(head.state.chain.base).toMatchObject({ folded: true, n: FOLD_AFTER + 1 });
    // The texts the snapshot holds went, though no commit came 1 or 2 after the fold's.
    expect(await readRaw(server.raw, store, `s/${s.id}/g/${head.gen}/t/000000000002`)).toBe(
      undefined,
    );
    expect((await store.load(s.id)).messages).toHaveLength(FOLD_AFTER + 5);
    await store.close();
    client.destroy();
  });
});

describe('a store that dies in the middle of a background fold', () => {
  for (const diesAt of ['f', 'ft', 'head', 'w'] as const) {
    it(`leaves the session readable and writable (dies at the fold's ${diesAt} write)`, async () => {
      let armed = false;
      let dead = false;
      const client = clientAround(server.target.endpoint, async (key, isWrite, send) => {
        if (dead) throw new Error('the writer process is gone');
        const foldWrite =
          diesAt === 'head'
            ? isWrite && key.endsWith('/head')
            : isWrite && new RegExp(`/g/[^/]+/${diesAt}/`).test(key);
        if (armed && foldWrite) {
          dead = true;
          throw new Error('the writer process is gone');
        }
        return send();
      });
      const prefix = freshPrefix(server.target);
      const dying = await openS3Store({ client, bucket: server.target.bucket, prefix });
      const s = await dying.create({ id: newSessionId(), messages: [msg('m0')] });
      for (let i = 1; i < FOLD_AFTER; i++) await dying.commit(s.id, { append: [msg(`m${i}`)] });
      const last = dying.commit(s.id, { append: [msg(`m${FOLD_AFTER}`)] });
      // Armed once the commit's own head move is sent: the next matching write is the fold's.
      armed = diesAt !== 'head';
      if (diesAt === 'head') {
        await last;
        armed = true;
      }
      await expect(last).resolves.toMatchObject({ revision: FOLD_AFTER + 1 });
      await dying.settled();
      expect(dead).toBe(true);
      await dying.close();
      client.destroy();

      const next = await storeOn(server.target, prefix);
      const all = Array.from({ length: FOLD_AFTER + 1 }, (_, i) => `m${i}`);
      expect((await next.load(s.id)).messages.map((m) => m.content)).toEqual(all);
      for (let i = 0; i < 3; i++) await next.commit(s.id, { append: [msg(`n${i}`)] });
      await next.settled();
      const loaded = await next.load(s.id);
      expect(loaded.messages.map((m) => m.content)).toEqual([...all, 'n0', 'n1', 'n2']);
      const listed = (await next.list()).find((x) => x.id === s.id);
      expect(listed).toMatchObject({ messageCount: FOLD_AFTER + 4, revision: FOLD_AFTER + 4 });
      // (An entry may still name the chain the fold's head move replaced: same messages.)
      expect(await next.repair()).toMatchObject({ skippedCorrupt: [] });
      const after = (await next.list()).find((x) => x.id === s.id);
      expect(after).toMatchObject({ messageCount: FOLD_AFTER + 4, revision: FOLD_AFTER + 4 });
      await next.close();
    });
  }
});

describe('upkeep is coalesced per session and bounded in number', () => {
  it('runs the newest task asked for after the one running, at most a few at once', async () => {
    const work = new OffPathWork();
    let running = 0;
    let most = 0;
    const ran: string[] = [];
    const gates: Array<() => void> = [];
    const task = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      ran.push(name);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
      if (name.endsWith('fails')) throw new Error('upkeep failed');
    };
    for (let k = 0; k < UPKEEP_CONCURRENCY + 3; k++) work.startUpkeep(`s${k}`, task(`s${k}`));
    work.startUpkeep('s0', task('s0 second'));
    work.startUpkeep('s0', task('s0 third fails'));
    let settled = false;
    void work.settled().then(() => {
      settled = true;
    });
    // Each round lets the tasks running end (a bounded number of rounds: 3 per task).
    for (let round = 0; !settled && round < 3 * (UPKEEP_CONCURRENCY + 5); round++) {
      for (const open of gates.splice(0)) open();
      await new Promise((r) => setImmediate(r));
    }
    expect(settled).toBe(true);
    expect(most).toBe(UPKEEP_CONCURRENCY);
    expect(ran.filter((r) => r.startsWith('s0'))).toEqual(['s0', 's0 third fails']);
    expect(ran).toHaveLength(UPKEEP_CONCURRENCY + 4);
  });
});
