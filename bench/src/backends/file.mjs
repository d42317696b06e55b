// The file store (sync: true, its default) beside an append + fdatasync of the same bytes
// on an already open file: one durable write per turn is the disk's own limit.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@sessionkit/file';

/** Bytes of every file under `dir`. */
function folderBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(path) : statSync(path).size;
  }
  return total;
}

/** This process's `wchar` from /proc/self/io (Linux), or NaN elsewhere. */
function processWrittenBytes() {
  try {
    return Number(/^wchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);
  } catch {
    return Number.NaN;
  }
}

export default {
  name: 'file',
  ceiling: 'append + fdatasync on an open fd',
  available: async () => true,
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'sessionkit-bench-file-'));
    const store = new FileStore({ dir });
    return {
      store,
      storedBytes: () => folderBytes(dir),
      // Bytes this process passed to write(2) (the store is the only writer while timed).
      writtenBytes: () => processWrittenBytes(),
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  async raw() {
    const dir = mkdtempSync(join(tmpdir(), 'sessionkit-bench-raw-'));
    const handle = await open(join(dir, 'log.jsonl'), 'a');
    return {
      async turn(messages) {
        await handle.write(`${JSON.stringify(messages)}\n`);
        await handle.datasync();
      },
      async close() {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};
