// Crashes: writer processes killed with SIGKILL at random moments (their acknowledged
// writes stay readable, no turn is half written, list tells what load tells), and the
// server stopped while writes are in flight, then started again on the same port.
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import {
  isSessionKitError,
  type Message,
  newSessionId,
  type Session,
  type SessionKitError,
} from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { openS3Store, type S3Store } from '../src/index.js';
import { freshPrefix, sharedClient, useTarget } from './harness.js';
import { startConditionalWriteProxy } from './support/conditional-write-proxy.js';
import { startS3rver, TEST_BUCKET, testClient } from './support/s3-server.js';

const server = useTarget();

const WRITER = fileURLToPath(new URL('./support/kill-writer.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/**
 * One round: a writer process on session `id`, killed (SIGKILL) a random 0–400 ms after
 * it opened its store. Resolves the turns it reported acknowledged.
 */
function killedWriter(prefix: string, id: string, round: number): Promise<string[]> {
  const acked: string[] = [];
  const child = fork(
    WRITER,
    [server.target.endpoint, server.target.bucket, prefix, id, String(round)],
    {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      execArgv: ['--no-warnings'],
    },
  );
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on(
      'message',
      (m: { ready?: boolean; acked?: string; failed?: string; error?: string }) => {
        if (m.ready) setTimeout(() => child.kill('SIGKILL'), Math.random() * 1500);
        if (m.acked !== undefined) acked.push(m.acked);
        if (m.failed !== undefined) reject(new Error(`${m.failed} failed: ${m.error}`));
      },
    );
    child.once('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`the writer exited by itself (${code ?? signal})`));
    });
  });
}

/** Checks that the session holds whole turns only, in order, each at most once. */
function turnsOf(session: Session<Message>): string[] {
  const names: string[] = [];
  const m = session.messages;
  expect(m.length % 2).toBe(0);
  for (let i = 0; i < m.length; i += 2) {
    const q = String(m[i]?.content);
    const name = q.replace(/ question$/, '');
    expect(q).toBe(`${name} question`);
    expect(m[i + 1]?.content).toBe(`${name} answer`);
    names.push(name);
  }
  expect(new Set(names).size).toBe(names.length);
  return names;
}

/** `list`'s summary of `session` equals what `load` tells. */
async function expectListedAsLoaded(store: S3Store, session: Session<Message>) {
  const listed = (await store.list({ limit: 100, includeArchived: true })).find(
    (s) => s.id === session.id,
  );
  const { messages, ...rest } = session;
  expect(listed).toEqual({ ...rest, messageCount: messages.length });
}

describe('writer processes killed with SIGKILL', () => {
  // Ten rounds a lane, each a process started and killed: on a loaded machine the starts
  // alone take longer than the default minute.
  it('30 rounds: every acknowledged turn readable, whole turns only, list equals load', {
    timeout: 180_000,
  }, async () => {
    expect(existsSync(BUILT), 'the kill test runs the built package: pnpm build first').toBe(true);
    const prefix = freshPrefix(server.target);
    // A short grace, so the writers' folds also remove versions while they are killed.
    const store = await openS3Store({
      client: sharedClient(server.target),
      bucket: server.target.bucket,
      prefix,
      pruneGraceMs: 5000,
    });
    // Three lanes of ten rounds, each lane on its own session.
    const lanes = await Promise.all(
      [0, 1, 2].map((lane) => store.create({ id: newSessionId(), title: `lane ${lane}` })),
    );
    let acknowledged = 0;
    await Promise.all(
      lanes.map(async (s, lane) => {
        const acked: string[] = [];
        for (let round = 0; round < 10; round++) {
          acked.push(...(await killedWriter(prefix, s.id, lane * 10 + round)));
          // Without repair: the listing tells what a load tells, even with the killed
          // writer's marker (and maybe its version without a head move) left behind.
          const loaded = await store.load(s.id);
          const stored = turnsOf(loaded);
          for (const name of acked) expect(stored).toContain(name);
          await expectListedAsLoaded(store, loaded);
        }
        acknowledged += acked.length;
      }),
    );
    console.info(`kill: 30 writer processes killed, ${acknowledged} acknowledged turns kept`);
    // repair() finds every session readable; list still equals load afterwards.
    const report = await store.repair();
    expect(report.skippedCorrupt).toEqual([]);
    for (const s of lanes) await expectListedAsLoaded(store, await store.load(s.id));
    expect((await store.repair()).indexEntriesFixed).toBe(0);
    await store.close();
  });
});

describe('the server restarted while writes are in flight', () => {
  it('in-flight and later calls fail unavailable (retryable); the same store writes on after', async () => {
    const s3rver = await startS3rver();
    let proxy = await startConditionalWriteProxy(s3rver.port);
    let restarted: Awaited<ReturnType<typeof startS3rver>> | undefined;
    const client = testClient(`http://127.0.0.1:${proxy.port}`);
    try {
      await client.send(new CreateBucketCommand({ Bucket: TEST_BUCKET }));
      const store = await openS3Store({ client, bucket: TEST_BUCKET, prefix: 'restart' });
      const sessions = await Promise.all(
        [0, 1, 2, 3].map((k) => store.create({ id: newSessionId(), title: `s${k}` })),
      );
      const failures: SessionKitError[] = [];
      let phase: 'before' | 'down' | 'after' = 'before';
      const acked: string[][] = sessions.map(() => []);
      // Each lane commits turns without pause; a failed one is retried with its operation
      // id once the server is back (so it lands exactly once), as a caller should. A lane
      // stops three turns after the restart.
      const lane = async (s: Session<Message>, k: number) => {
        let afterRestart = 0;
        for (let turn = 0; afterRestart < 3; turn++) {
          const name = `l${k}t${turn}`;
          const append: Message[] = [
            { role: 'user', content: `${name} question` },
            { role: 'assistant', content: `${name} answer` },
          ];
          for (;;) {
            const during = phase;
            try {
              await store.commit(s.id, { append, operationId: name });
              acked[k]?.push(name);
              if (during === 'after') afterRestart++;
              break;
            } catch (e) {
              if (!isSessionKitError(e)) throw e;
              failures.push(e);
              while (phase === 'down') await new Promise((r) => setTimeout(r, 50));
            }
          }
        }
      };
      const running = Promise.all(sessions.map(lane));
      // Stop both once every lane has landed two turns: the lanes' next writes are in flight.
      while (acked.some((a) => a.length < 2)) await new Promise((r) => setTimeout(r, 20));
      phase = 'down';
      await proxy.stop();
      await s3rver.stop();
      const e = await store.load(sessions[0]?.id ?? '').then(
        () => undefined,
        (x: unknown) => x as SessionKitError,
      );
      expect(isSessionKitError(e, 'unavailable')).toBe(true);
      expect(e?.retryable).toBe(true);
      restarted = await startS3rver({ port: s3rver.port, directory: s3rver.directory });
      proxy = await startConditionalWriteProxy(restarted.port, proxy.port);
      phase = 'after';
      await running;
      // Every lane was writing when the server went: each saw at least one failure.
      expect(failures.length).toBeGreaterThanOrEqual(sessions.length);
      for (const f of failures) {
        expect(isSessionKitError(f, 'unavailable')).toBe(true);
        expect(f.retryable).toBe(true);
      }
      for (const [k, s] of sessions.entries()) {
        const loaded = await store.load(s.id);
        expect(turnsOf(loaded)).toEqual(acked[k]);
        await expectListedAsLoaded(store, loaded);
      }
      await store.close();
    } finally {
      client.destroy();
      await proxy.stop().catch(() => {});
      await (restarted ?? s3rver).dispose();
      await s3rver.dispose();
    }
  });
});
