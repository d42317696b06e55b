import { promises as fsp, readlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { isSessionKitError } from '../src/errors.js';
import {
  isLockHolderGone,
  lockFileContent,
  lockHolderState,
  withFileLock,
} from '../src/fs/file-lock.js';
import {
  deadPid,
  holdInChild,
  raceChildren,
  removeDistSnapshot,
  runChild,
  snapshotDist,
} from './fixtures/children.js';

let dir: string;
let lock: string;
beforeAll(snapshotDist);
afterAll(removeDistSnapshot);
beforeEach(async () => {
  dir = await fsp.mkdtemp(join(tmpdir(), 'sk-lock-'));
  lock = join(dir, 'test.lock');
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const exists = (p: string) =>
  fsp.stat(p).then(
    () => true,
    () => false,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Our pid namespace as the lock records it (Linux only). */
const ourPidNamespace = (() => {
  if (process.platform !== 'linux') return undefined;
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
})();
/** Where a lock's pid can be judged at all: elsewhere only the mtime counts. */
const pidsJudged = ourPidNamespace !== undefined;

async function age(path: string, ageMs: number): Promise<void> {
  const t = new Date(Date.now() - ageMs);
  await fsp.utimes(path, t, t);
}

/**
 * Writes a lock file as another holder would. `pidNamespace` defaults to ours (what a
 * holder of this version in our namespace writes); pass `undefined` for an older version.
 */
async function writeForeignLock(
  info: { pid: number; hostname: string; token?: string; pidNamespace?: string },
  ageMs = 0,
): Promise<string> {
  const token = info.token ?? 'foreign-token';
  const content = { pidNamespace: ourPidNamespace, ...info, token };
  await fsp.writeFile(lock, JSON.stringify({ ...content, acquiredAt: new Date().toISOString() }), {
    mode: 0o600,
  });
  if (ageMs) await age(lock, ageMs);
  return token;
}

describe('withFileLock: basics', () => {
  it('returns what fn returns, writes the holder info while held, and removes the file', async () => {
    let seen: Record<string, unknown> = {};
    const result = await withFileLock(lock, async () => {
      seen = JSON.parse(await fsp.readFile(lock, 'utf8'));
      if (process.platform !== 'win32') expect((await fsp.stat(lock)).mode & 0o777).toBe(0o600);
      return 42;
    });
    expect(result).toBe(42);
    expect(seen).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(seen.pidNamespace).toBe(ourPidNamespace);
    expect(typeof seen.token).toBe('string');
    expect(Number.isNaN(Date.parse(String(seen.acquiredAt)))).toBe(false);
    expect(await exists(lock)).toBe(false);
    expect(await fsp.readdir(dir)).toEqual([]);
  });

  it('accepts a synchronous fn', async () => {
    expect(await withFileLock(lock, () => 'sync')).toBe('sync');
  });

  it('releases the lock when fn throws, and rethrows the same error', async () => {
    const boom = new Error('boom');
    await expect(
      withFileLock(lock, async () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await exists(lock)).toBe(false);
    expect(await withFileLock(lock, () => 'again')).toBe('again');
  });

  it('serialises holders within one process', async () => {
    const counter = join(dir, 'counter');
    await fsp.writeFile(counter, '0');
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withFileLock(lock, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          const n = Number(await fsp.readFile(counter, 'utf8'));
          await new Promise((r) => setImmediate(r));
          await fsp.writeFile(counter, String(n + 1));
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    expect(await fsp.readFile(counter, 'utf8')).toBe('20');
    expect(await exists(lock)).toBe(false);
  });

  it('times out with unavailable while another holder in this process keeps it', async () => {
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const holding = withFileLock(lock, async () => {
      const done = new Promise<void>((r) => {
        release = r;
      });
      entered();
      await done;
    });
    await inside;
    const e = await withFileLock(lock, () => 'never', { timeoutMs: 100 }).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect((e as Error).message).toContain(lock);
    release();
    await holding;
    // The timed-out waiter left the queue: the lock is free again.
    expect(await withFileLock(lock, () => 'free', { timeoutMs: 0 })).toBe('free');
  });

  it('treats two spellings of one path as the same lock', async () => {
    const order: string[] = [];
    const a = withFileLock(lock, async () => {
      order.push('a-in');
      await sleep(20);
      order.push('a-out');
    });
    const b = withFileLock(`${dir}/./test.lock`, async () => {
      order.push('b-in');
    });
    await Promise.all([a, b]);
    expect(order).toEqual(['a-in', 'a-out', 'b-in']);
  });

  it('throws invalid_argument instead of deadlocking when taken again inside fn', async () => {
    const other = join(dir, 'other.lock');
    const result = await withFileLock(lock, async () => {
      const nested = await withFileLock(lock, () => 'never').catch((e: unknown) => e);
      expect(isSessionKitError(nested, 'invalid_argument')).toBe(true);
      // A different lock is fine.
      return withFileLock(other, () => 'inner');
    });
    expect(result).toBe('inner');
    expect(await exists(lock)).toBe(false);
  });

  it('lets work started inside fn take the lock after fn has released it', async () => {
    let later: Promise<string> | undefined;
    await withFileLock(lock, () => {
      later = sleep(10).then(() => withFileLock(lock, () => 'later'));
    });
    expect(await later).toBe('later');
  });

  it('refreshes the mtime while held so a long holder never looks stale', async () => {
    await withFileLock(
      lock,
      async () => {
        const before = (await fsp.stat(lock)).mtimeMs;
        await sleep(250);
        const after = (await fsp.stat(lock)).mtimeMs;
        expect(after).toBeGreaterThan(before);
      },
      { staleMs: 90 },
    );
  });

  it('rejects bad options with invalid_argument', async () => {
    for (const options of [{ timeoutMs: -1 }, { staleMs: 0 }, { retryMs: Number.NaN }]) {
      const e = await withFileLock(lock, () => 1, options).catch((x: unknown) => x);
      expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
    }
    const e = await withFileLock('', () => 1).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
  });

  it('passes a missing folder through as ENOENT', async () => {
    await expect(withFileLock(join(dir, 'no', 'x.lock'), () => 1)).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});

describe('withFileLock: across processes', () => {
  it('gives mutual exclusion to 4 processes incrementing a counter 50 times each', async () => {
    const counter = join(dir, 'counter');
    await fsp.writeFile(counter, '0');
    await Promise.all(Array.from({ length: 4 }, () => runChild(['counter', lock, counter, '50'])));
    expect(await fsp.readFile(counter, 'utf8')).toBe('200');
    expect(await exists(lock)).toBe(false);
  });

  it('blocks while a live process holds the lock, then throws unavailable naming the path', async () => {
    const holder = await holdInChild(lock);
    try {
      let ran = false;
      const e = await withFileLock(
        lock,
        () => {
          ran = true;
        },
        { timeoutMs: 300 },
      ).catch((x: unknown) => x);
      expect(ran).toBe(false);
      expect(isSessionKitError(e, 'unavailable')).toBe(true);
      expect((e as Error).message).toContain(lock);
      expect((e as Error).message).toContain(`pid ${holder.child.pid}`);
      expect((e as { retryable: boolean }).retryable).toBe(true);
      // The holder's file is untouched.
      expect(JSON.parse(await fsp.readFile(lock, 'utf8')).pid).toBe(holder.child.pid);
    } finally {
      await holder.release();
    }
    expect(await exists(lock)).toBe(false);
    expect(await withFileLock(lock, () => 'free', { timeoutMs: 1000 })).toBe('free');
  });

  it('does not break a live holder that keeps refreshing, even past staleMs', async () => {
    // Without the refresh the file would be older than staleMs well before the timeout.
    const holder = await holdInChild(lock, 300);
    try {
      const e = await withFileLock(lock, () => 'stolen', { staleMs: 300, timeoutMs: 1000 }).catch(
        (x: unknown) => x,
      );
      expect(isSessionKitError(e, 'unavailable')).toBe(true);
    } finally {
      await holder.release();
    }
  });

  it.runIf(pidsJudged)('breaks a lock left by a process that has exited', async () => {
    const pid = await deadPid();
    await writeForeignLock({ pid, hostname: hostname() });
    const result = await withFileLock(
      lock,
      async () => JSON.parse(await fsp.readFile(lock, 'utf8')).pid,
      { timeoutMs: 2000 },
    );
    expect(result).toBe(process.pid);
    expect(await fsp.readdir(dir)).toEqual([]);
  });

  it('breaks a lock whose mtime is older than staleMs, even with a live pid', async () => {
    await writeForeignLock({ pid: process.ppid, hostname: hostname() }, 60_000);
    expect(await withFileLock(lock, () => 'got it', { timeoutMs: 2000 })).toBe('got it');
    expect(await fsp.readdir(dir)).toEqual([]);
  });

  it('breaks an old empty lock file (holder died before writing it)', async () => {
    await fsp.writeFile(lock, '');
    const t = new Date(Date.now() - 60_000);
    await fsp.utimes(lock, t, t);
    expect(await withFileLock(lock, () => 'ok', { timeoutMs: 2000 })).toBe('ok');
  });

  it('judges an empty lock file by its mtime alone (a network file system may not show the content yet)', async () => {
    await fsp.writeFile(lock, '');
    const t = new Date(Date.now() - 3_000);
    await fsp.utimes(lock, t, t);
    const e = await withFileLock(lock, () => 'x', { timeoutMs: 200, staleMs: 60_000 }).catch(
      (x: unknown) => x,
    );
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect(await fsp.readFile(lock, 'utf8')).toBe('');
  });

  it('waits for a fresh empty lock file (holder still writing it)', async () => {
    await fsp.writeFile(lock, '');
    const e = await withFileLock(lock, () => 'x', { timeoutMs: 200 }).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect(await fsp.readFile(lock, 'utf8')).toBe('');
  });

  it('does not judge a fresh lock of another host by its pid', async () => {
    const pid = await deadPid();
    await writeForeignLock({ pid, hostname: `not-${hostname()}` });
    const e = await withFileLock(lock, () => 'x', { timeoutMs: 200 }).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect(await exists(lock)).toBe(true);
  });

  it('lets only one of many waiters break a stale lock at a time', async () => {
    const pid = await deadPid();
    // Where pids cannot be judged, the lock is stale by its mtime instead.
    await writeForeignLock({ pid, hostname: hostname() }, pidsJudged ? 0 : 60_000);
    const counter = join(dir, 'counter');
    await fsp.writeFile(counter, '0');
    await Promise.all(Array.from({ length: 3 }, () => runChild(['counter', lock, counter, '10'])));
    expect(await fsp.readFile(counter, 'utf8')).toBe('30');
    expect(await fsp.readdir(dir)).toEqual(['counter']);
  });

  it('does not delete a lock that was replaced by someone else while held', async () => {
    await withFileLock(lock, async () => {
      // Simulate our lock being broken (we looked stale) and taken by another process.
      await fsp.unlink(lock);
      await writeForeignLock({ pid: process.ppid, hostname: hostname(), token: 'theirs' });
    });
    expect(JSON.parse(await fsp.readFile(lock, 'utf8')).token).toBe('theirs');
    expect(await fsp.readdir(dir)).toEqual(['test.lock']);
  });

  it('release leaves a fresh lock of another live holder in place', async () => {
    let holder: Awaited<ReturnType<typeof holdInChild>> | undefined;
    try {
      await withFileLock(lock, async () => {
        // Our lock was broken meanwhile (as if we had stalled) and a live process took it.
        await fsp.unlink(lock);
        holder = await holdInChild(lock);
      });
      const info = JSON.parse(await fsp.readFile(lock, 'utf8'));
      expect(info.pid).toBe(holder?.child.pid);
      expect(await fsp.readdir(dir)).toEqual(['test.lock']);
    } finally {
      await holder?.release();
    }
    expect(await exists(lock)).toBe(false);
  });

  it('six processes racing to break one stale lock: one holder at a time, no lost update', async () => {
    const pid = await deadPid();
    await writeForeignLock({ pid, hostname: hostname() }, pidsJudged ? 0 : 60_000);
    const counter = join(dir, 'counter');
    const log = join(dir, 'log');
    await fsp.writeFile(counter, '0');
    await fsp.writeFile(log, '');
    const times = 5;
    const tags = ['a', 'b', 'c', 'd', 'e', 'f'];
    await raceChildren(tags.map((tag) => ['logged', lock, counter, log, String(times), tag]));
    expect(await fsp.readFile(counter, 'utf8')).toBe(String(tags.length * times));
    const lines = (await fsp.readFile(log, 'utf8')).split('\n').filter(Boolean);
    expect(lines).toHaveLength(2 * tags.length * times);
    // Every enter is followed directly by the exit of the same process: never two inside.
    for (let i = 0; i < lines.length; i += 2) {
      const tag = lines[i]?.split(' ')[1];
      expect([lines[i], lines[i + 1]]).toEqual([`enter ${tag}`, `exit ${tag}`]);
    }
    // The stale lock and every breaker file are gone.
    expect((await fsp.readdir(dir)).sort()).toEqual(['counter', 'log']);
  });
});

describe('withFileLock: pid namespaces', () => {
  it('does not break a fresh lock of another pid namespace, even with a dead-looking pid', async () => {
    const pid = await deadPid();
    const token = await writeForeignLock({
      pid,
      hostname: hostname(), // a container sharing our hostname
      pidNamespace: 'pid:[1]',
    });
    const e = await withFileLock(lock, () => 'x', { timeoutMs: 300 }).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect(JSON.parse(await fsp.readFile(lock, 'utf8')).token).toBe(token);
  });

  it('judges a lock of an older version (no pidNamespace) by its mtime only', async () => {
    const pid = await deadPid();
    const token = await writeForeignLock({ pid, hostname: hostname(), pidNamespace: undefined });
    expect(JSON.parse(await fsp.readFile(lock, 'utf8'))).not.toHaveProperty('pidNamespace');
    const e = await withFileLock(lock, () => 'x', { timeoutMs: 300 }).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect(JSON.parse(await fsp.readFile(lock, 'utf8')).token).toBe(token);
    // Once its mtime is older than staleMs it is broken like any abandoned lock.
    await age(lock, 60_000);
    expect(await withFileLock(lock, () => 'got it', { timeoutMs: 2000 })).toBe('got it');
    expect(await fsp.readdir(dir)).toEqual([]);
  });
});

describe('withFileLock: the breaker lock', () => {
  const breaker = () => `${lock}.break`;

  it('does not break a stale lock while another breaker holds <lock>.break', async () => {
    const token = await writeForeignLock({ pid: process.ppid, hostname: hostname() }, 60_000);
    await fsp.writeFile(breaker(), 'someone else', { mode: 0o600 });
    const e = await withFileLock(lock, () => 'x', { timeoutMs: 300 }).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect(JSON.parse(await fsp.readFile(lock, 'utf8')).token).toBe(token);
    expect(await fsp.readFile(breaker(), 'utf8')).toBe('someone else');
  });

  it('removes a breaker file left behind for longer than 5 s, then breaks the stale lock', async () => {
    await writeForeignLock({ pid: process.ppid, hostname: hostname() }, 60_000);
    await fsp.writeFile(breaker(), 'crashed breaker', { mode: 0o600 });
    await age(breaker(), 60_000);
    expect(await withFileLock(lock, () => 'got it', { timeoutMs: 5000 })).toBe('got it');
    expect(await fsp.readdir(dir)).toEqual([]);
  });

  it('leaves no breaker file behind after breaking, with mode 0600 while it exists', async () => {
    await writeForeignLock({ pid: process.ppid, hostname: hostname() }, 60_000);
    const realOpen = fsp.open;
    const modes: number[] = [];
    const spy = vi.spyOn(fsp, 'open').mockImplementation(async (...args) => {
      const handle = await realOpen(...args);
      if (String(args[0]) === breaker()) modes.push((await handle.stat()).mode & 0o777);
      return handle;
    });
    try {
      expect(await withFileLock(lock, () => 'ok', { timeoutMs: 2000 })).toBe('ok');
    } finally {
      spy.mockRestore();
    }
    expect(modes).toHaveLength(1);
    if (process.platform !== 'win32') expect(modes[0]).toBe(0o600);
    expect(await fsp.readdir(dir)).toEqual([]);
  });
});

describe('isLockHolderGone: the one liveness rule for lock files', () => {
  const content = (info: Record<string, unknown>) =>
    JSON.stringify({ token: 't', acquiredAt: new Date().toISOString(), ...info });

  it.runIf(pidsJudged)('is true only for a dead pid of this host and pid namespace', async () => {
    const pid = await deadPid();
    const ours = { hostname: hostname(), pidNamespace: ourPidNamespace };
    expect(isLockHolderGone(content({ pid, ...ours }))).toBe(true);
    // The same dead pid, but uncertain: another host, another or no namespace, no token.
    expect(isLockHolderGone(content({ pid, ...ours, hostname: `${hostname()}-other` }))).toBe(
      false,
    );
    expect(isLockHolderGone(content({ pid, ...ours, pidNamespace: 'pid:[1]' }))).toBe(false);
    expect(isLockHolderGone(content({ pid, hostname: hostname() }))).toBe(false);
    expect(isLockHolderGone(JSON.stringify({ pid, ...ours }))).toBe(false);
  });

  it('is false for a live holder, this process, and anything unreadable', () => {
    const ours = { hostname: hostname(), pidNamespace: ourPidNamespace };
    expect(isLockHolderGone(content({ pid: process.ppid, ...ours }))).toBe(false);
    expect(isLockHolderGone(content({ pid: process.pid, ...ours }))).toBe(false);
    expect(isLockHolderGone(content({ pid: 0, ...ours }))).toBe(false);
    expect(isLockHolderGone(content({ pid: -1, ...ours }))).toBe(false);
    for (const bad of ['', '{', 'null', '[]', '{"pid":"1"}']) {
      expect(isLockHolderGone(bad)).toBe(false);
    }
  });
});

describe('lockHolderState: alive, gone or unknown, by the same rule', () => {
  const content = (info: Record<string, unknown>) =>
    JSON.stringify({ token: 't', acquiredAt: new Date().toISOString(), ...info });
  const ours = { hostname: hostname(), pidNamespace: ourPidNamespace };

  it.runIf(pidsJudged)(
    'alive for a running process of this host, gone for a dead one',
    async () => {
      expect(lockHolderState(content({ pid: process.ppid, ...ours }))).toBe('alive');
      expect(lockHolderState(content({ pid: process.pid, ...ours }))).toBe('alive');
      expect(lockHolderState(lockFileContent('x'))).toBe('alive');
      expect(lockHolderState(content({ pid: await deadPid(), ...ours }))).toBe('gone');
    },
  );

  it('unknown for another host or namespace, bad pids and unreadable content', () => {
    expect(lockHolderState(content({ pid: process.pid, ...ours, hostname: 'elsewhere' }))).toBe(
      'unknown',
    );
    expect(lockHolderState(content({ pid: process.ppid, ...ours, pidNamespace: 'pid:[1]' }))).toBe(
      'unknown',
    );
    expect(lockHolderState(content({ pid: 0, ...ours }))).toBe('unknown');
    for (const bad of ['', '{', 'null', '{"pid":"1"}'])
      expect(lockHolderState(bad)).toBe('unknown');
  });
});
