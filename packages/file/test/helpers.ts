import { spawn, spawnSync } from 'node:child_process';
import {
  promises as fsp,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ConformanceInitializer, SPEC_NAMES, type SpecName } from '@sessionkit/conformance';
import { isSessionKitError, type Message } from '@sessionkit/core';
import { afterAll, afterEach, beforeEach } from 'vitest';
import { encodeFrame } from '../src/format/frame.js';
import { FORMAT_VERSION } from '../src/format/version.js';
import { FileStore, type FileStoreOptions } from '../src/index.js';

/** A fresh private temp folder. */
export function tempDir(prefix = 'sk-file-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The snapshot files of a session, oldest first. */
export function snapshotsOf(dir: string, id: string): string[] {
  return readdirSync(join(dir, 'sessions', id))
    .filter((n) => /^snap-\d+\.skr$/.test(n))
    .sort((a, b) => Number(a.slice(5, -4)) - Number(b.slice(5, -4)))
    .map((n) => join(dir, 'sessions', id, n));
}

/** The conformance specs this adapter runs: all of them. */
export const fileConformanceSpecs: SpecName[] = [...SPEC_NAMES];

/** Folders the open-store spec's URLs named, removed when the suite ends. */
const urlDirs: string[] = [];

/** The file-store initializer of the conformance suite. */
export const fileInitializer: ConformanceInitializer<FileStore> = {
  name: 'file',
  create: () => new FileStore({ dir: join(tempDir(), 'store') }),
  createPeer: (store) => new FileStore({ dir: store.dir }),
  destroy: (store) => rmSync(join(store.dir, '..'), { recursive: true, force: true }),
  probes: {
    messageBodyReads: (store) => store.stats.transcriptReads,
  },
  // A file: URL naming a fresh folder, opened through core's openStore.
  openUrl: () => {
    const dir = tempDir();
    urlDirs.push(dir);
    return `file:${join(dir, 'store')}`;
  },
  afterAll: () => {
    for (const dir of urlDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  },
  faults: {
    damageIndex: async (store, id, kind) => {
      const index = join(store.dir, 'index.log');
      if (kind === 1) {
        // The entry deleted from the index: the session is still on disk.
        await fsp.appendFile(index, encodeFrame({ v: FORMAT_VERSION, op: 'del', id }));
        return;
      }
      // A stale cache entry appended to the real index file: wrong title and count.
      const entry = (await store.list({ includeArchived: true, limit: 1000 })).find(
        (s) => s.id === id,
      );
      if (!entry) throw new Error(`no index entry for ${id}`);
      const { children: _c, ...rest } = entry;
      const stale = {
        ...rest,
        title: 'stale',
        messageCount: 0,
        createdAt: rest.createdAt.getTime(),
        updatedAt: 0,
        archivedAt: rest.archivedAt?.getTime(),
      };
      await fsp.appendFile(
        index,
        encodeFrame({ v: FORMAT_VERSION, op: 'put', entry: JSON.parse(JSON.stringify(stale)) }),
      );
    },
    indexDamageKinds: 2,
    corruptSession: async (store, id, kind) => {
      const snaps = snapshotsOf(store.dir, id);
      const path = snaps[snaps.length - 1]!;
      const buf = await fsp.readFile(path);
      if (kind === 1) {
        // A snapshot cut short (a torn copy from another disk).
        await fsp.writeFile(path, buf.subarray(0, Math.floor(buf.length / 2)));
        return;
      }
      // Garbage over the middle of the newest snapshot.
      buf.fill(0x7a, Math.floor(buf.length / 3), Math.floor(buf.length / 3) + 16);
      await fsp.writeFile(path, buf);
    },
    corruptionKinds: 2,
  },
};

/** The error code a promise rejects with, `ok` when it resolves. */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (e: unknown) => (isSessionKitError(e) ? e.code : `foreign: ${String(e)}`),
  );
}

/** A user message with text `content`. */
export const msg = (content: string): Message => ({ role: 'user', content });

/** A lock file as core's `withFileLock` writes it, naming a process that has exited. */
export function deadLock(path: string): void {
  const pid = spawnSync(process.execPath, ['-e', '']).pid;
  let pidNamespace: string | undefined;
  try {
    pidNamespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    pidNamespace = undefined;
  }
  writeFileSync(
    path,
    JSON.stringify({
      pid,
      hostname: hostname(),
      acquiredAt: new Date().toISOString(),
      token: 'dead',
      pidNamespace,
    }),
    { mode: 0o600 },
  );
}

/**
 * A fresh store folder for each test of the calling file (`dir` inside the temp `root`),
 * and `open()` for stores on it; after each test the stores are closed and `root` removed.
 */
export function storeFolderFixture() {
  const stores: FileStore[] = [];
  const fixture = {
    root: '',
    dir: '',
    open(options: Omit<FileStoreOptions, 'dir'> = {}): FileStore {
      const store = new FileStore({ dir: fixture.dir, ...options });
      stores.push(store);
      return store;
    },
  };
  beforeEach(() => {
    fixture.root = tempDir();
    fixture.dir = join(fixture.root, 'store');
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    rmSync(fixture.root, { recursive: true, force: true });
  });
  return fixture;
}

/**
 * Temp folders for the calling test file, all removed after its tests: `root()` makes a
 * fresh one, `storeDir()` a `store` folder path inside a fresh one.
 */
export function tempFolders() {
  const roots: string[] = [];
  afterAll(() => {
    for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
  });
  const root = () => {
    const r = tempDir();
    roots.push(r);
    return r;
  };
  return { root, storeDir: () => join(root(), 'store') };
}

/** Runs `node script args…`; resolves with its stdout when it exits 0, else rejects with its stderr. */
export function runNode(script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${script} exited ${code}: ${err}`)),
    );
  });
}

/** Runs `fixtures/race-child.mjs` (a writer in its own process) with `args` and its store options. */
export function runRaceChild(dir: string, ...args: [...string[], object]): Promise<string> {
  const options = args.pop() as object;
  const script = fileURLToPath(new URL('./fixtures/race-child.mjs', import.meta.url));
  return runNode(script, [dir, ...(args as string[]), JSON.stringify(options)]);
}
