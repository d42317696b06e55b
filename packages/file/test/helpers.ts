import { promises as fsp, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConformanceInitializer } from '@sessionkit/conformance';
import { FileStore } from '../src/index.js';
import { encodeFrame, FORMAT_VERSION } from '../src/layout.js';

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

/** The file-store initializer of the conformance suite. */
export const fileInitializer: ConformanceInitializer<FileStore> = {
  name: 'file',
  create: () => new FileStore({ dir: join(tempDir(), 'store') }),
  createPeer: (store) => new FileStore({ dir: store.dir }),
  destroy: (store) => rmSync(join(store.dir, '..'), { recursive: true, force: true }),
  probes: {
    messageBodyReads: (store) => store.stats.transcriptReads,
  },
  faults: {
    damageIndex: async (store, id) => {
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
        join(store.dir, 'index.log'),
        encodeFrame({ v: FORMAT_VERSION, op: 'put', entry: JSON.parse(JSON.stringify(stale)) }),
      );
    },
    corruptSession: async (store, id) => {
      // Garbage over the middle of the newest snapshot.
      const snaps = snapshotsOf(store.dir, id);
      const path = snaps[snaps.length - 1]!;
      const buf = await fsp.readFile(path);
      buf.fill(0x7a, Math.floor(buf.length / 3), Math.floor(buf.length / 3) + 16);
      await fsp.writeFile(path, buf);
    },
  },
};
