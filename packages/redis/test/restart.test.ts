// A Redis restart in the middle of a run, on a private server this file starts with
// `appendfsync always` (the persistence mode in which an acknowledged write survives).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSessionKitError } from '@sessionkit/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openRedisStore, type RedisStore } from '../src/index.js';
import { freePort, type ServerProcess, startServer, stopServer } from './cluster.js';
import { clusterAvailable } from './cluster-env.js';

const available = clusterAvailable('the restart test did not run');
const AOF = ['--appendonly', 'yes', '--appendfsync', 'always'];

let dir = '';
let port = 0;
let server: ServerProcess | undefined;

beforeAll(async () => {
  if (!available) return;
  dir = mkdtempSync(join(tmpdir(), 'sk-redis-restart-'));
  port = await freePort();
  server = await startServer(port, dir, AOF);
});

afterAll(async () => {
  if (server) await stopServer(server);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!available)('redis › restart of the server mid-run', () => {
  it('an in-flight call fails unavailable and retryable, the next ones succeed, nothing acknowledged is lost', async () => {
    const consoleError = vi.spyOn(console, 'error');
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    let store: RedisStore | undefined;
    try {
      store = await openRedisStore(`redis://127.0.0.1:${port}/?prefix=restart:`);
      await store.create({ id: 's' });
      for (let i = 0; i < 20; i++) {
        await store.commit('s', {
          append: [{ role: 'user', content: `m${i}` }],
          increment: { turnCount: 1 },
        });
      }
      // Freeze the server so the next call is surely in flight, then kill it.
      (server as ServerProcess).child.kill('SIGSTOP');
      const inFlight = store.commit('s', { append: [{ role: 'user', content: 'in flight' }] });
      await new Promise((r) => setTimeout(r, 200));
      await stopServer(server as ServerProcess);
      const error = await inFlight.catch((e: unknown) => e);
      expect(isSessionKitError(error, 'unavailable'), String(error)).toBe(true);
      expect((error as { retryable?: unknown }).retryable).toBe(true);
      expect((error as Error).message).not.toMatch(/password/i);
      // While it is down, calls fail the same way rather than hang.
      const down = await store.load('s').catch((e: unknown) => e);
      expect(isSessionKitError(down, 'unavailable'), String(down)).toBe(true);

      server = await startServer(port, dir, AOF);
      const loaded = await retry(() => (store as RedisStore).load('s'));
      // Every acknowledged commit is there; the unacknowledged one was never applied
      // (the server was frozen before it read it).
      expect(loaded.messages.map((m) => m.content)).toEqual(
        Array.from({ length: 20 }, (_, i) => `m${i}`),
      );
      expect(loaded.turnCount).toBe(20);
      const next = await store.commit('s', { append: [{ role: 'user', content: 'after' }] });
      expect(next.messageCount).toBe(21);
      expect((await store.list()).map((x) => x.id)).toEqual(['s']);
      expect(consoleError.mock.calls.flat().join('\n')).not.toContain('Unhandled error event');
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      consoleError.mockRestore();
      await store?.close();
    }
  });
});

/** The first success within 10 s: the client reconnects on its own backoff. */
async function retry<T>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await run();
    } catch (e) {
      if (!isSessionKitError(e, 'unavailable') || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
