// The commit journal (io/commit-journal.ts, io/journal-file.ts): each file is written in
// place inside allocated space; when one is full a second takes over while the first is
// checkpointed in the background (its logs fdatasync'd, then the next generation), and
// replay reads only the records of the generation a header names.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFrames } from '../src/format/frame.js';
import { CommitJournal } from '../src/io/commit-journal.js';
import { HEADER_BYTES, type JournalOwnerMeta } from '../src/io/journal-file.js';
import { LogSyncer } from '../src/io/log-syncer.js';
import { journalRecords } from '../src/session/journal-replay.js';
import { tempFolders } from './helpers.js';

const folders = tempFolders();

/** A log fdatasync a test holds until it calls `release()`. */
function heldLogSyncs() {
  const pending: { path: string; resolve: () => void }[] = [];
  const calls: string[] = [];
  return {
    calls,
    pending,
    syncLog: (path: string) =>
      new Promise<void>((resolve) => {
        calls.push(path);
        pending.push({ path, resolve });
      }),
    release: () => {
      for (const p of pending.splice(0)) p.resolve();
    },
  };
}

function journalIn(
  dir: string,
  bytes: number,
  group = false,
  syncLog?: (path: string) => Promise<void>,
) {
  const stats = { groupFlushes: 0, groupCommits: 0, inlineSyncs: 0 };
  const journal = new CommitJournal({
    dir,
    group,
    groupMs: 0,
    syncer: new LogSyncer(2, stats),
    stats,
    bytes,
    syncLog,
  });
  const files = () =>
    readdirSync(dir)
      .filter((n) => n.endsWith('.skj'))
      .map((n) => join(dir, n));
  const head = (file: string) =>
    parseFrames<JournalOwnerMeta>(readFileSync(file).subarray(0, HEADER_BYTES)).frames[0]!.meta;
  const records = (file: string) => [...journalRecords(readFileSync(file), head(file)).values()];
  const offsets = (file: string) =>
    records(file)
      .flat()
      .map((r) => r.offset)
      .sort((a, b) => a - b);
  return { journal, files, head, offsets };
}

/** Resolves once the event loop has run the callbacks queued before it (thread pool included). */
const settle = () => new Promise((r) => setTimeout(r, 20));

describe('commit journal', () => {
  it('keeps each file at its allocated size and alternates two files, checkpointing the full one', async () => {
    const dir = folders.root();
    const log = join(dir, 'log-1.skr');
    writeFileSync(log, '');
    const space = 64 * 1024;
    const { journal, files, head, offsets } = journalIn(dir, HEADER_BYTES + space);
    const frame = Buffer.alloc(2000, 0x61);
    for (let i = 0; i < 10; i++) await journal.commit('s', 1, i * 2000, frame, log);
    const [first] = files();
    expect(files()).toHaveLength(1);
    for (let i = 10; i < 20; i++) await journal.commit('s', 1, i * 2000, frame, log);
    expect(statSync(first!).size).toBe(HEADER_BYTES + space); // allocated once, written in place
    expect(head(first!).gen).toBe(1);
    expect(offsets(first!)).toHaveLength(20);
    // Past half of the space a second file is prepared beside the commits: all of its
    // space written already, no records yet, so the hand-over allocates nothing.
    await settle();
    expect(files()).toHaveLength(2);
    const second = files().find((f) => f !== first)!;
    expect(statSync(second).size).toBe(HEADER_BYTES + space);
    expect(offsets(second)).toEqual([]);
    // 32 more records do not fit: the second file takes over, the first is checkpointed.
    for (let i = 20; i < 52; i++) await journal.commit('s', 1, i * 2000, frame, log);
    await settle();
    expect(files()).toHaveLength(2);
    expect(statSync(second).size).toBe(HEADER_BYTES + space);
    expect(head(first!).gen).toBe(2);
    expect(offsets(first!)).toEqual([]);
    const current = offsets(second).map((o) => o / 2000);
    expect(current).toEqual(
      Array.from({ length: current.length }, (_, i) => 52 - current.length + i),
    );
    // The first file's old records still follow its header on disk, and are not read.
    expect(
      readFileSync(first!)
        .subarray(HEADER_BYTES)
        .some((b) => b !== 0),
    ).toBe(true);
    // When the second is full the first takes over again: no third file, same sizes.
    for (let i = 52; i < 90; i++) await journal.commit('s', 1, i * 2000, frame, log);
    await settle();
    expect(files().sort()).toEqual([first!, second].sort());
    expect(head(first!).gen).toBe(2);
    expect(head(second).gen).toBe(2);
    expect(offsets(first!).at(-1)).toBe(89 * 2000);
    expect(statSync(first!).size).toBe(HEADER_BYTES + space);
    await journal.close();
    expect(files()).toEqual([]);
  });

  it('acknowledges commits while the full file’s logs are still being fdatasync’d', async () => {
    const dir = folders.root();
    const logs = [0, 1, 2].map((i) => join(dir, `log-${i}.skr`));
    for (const log of logs) writeFileSync(log, '');
    const held = heldLogSyncs();
    const { journal, files, head, offsets } = journalIn(
      dir,
      HEADER_BYTES + 64 * 1024,
      false,
      held.syncLog,
    );
    const frame = Buffer.alloc(2000, 0x63);
    for (let i = 0; i < 40; i++) await journal.commit(`s${i % 3}`, 1, i, frame, logs[i % 3]!);
    // Every commit resolved, yet the checkpoint of the first file is still waiting for
    // its logs: it runs beside the commits, not in front of them.
    expect(held.pending.length).toBeGreaterThan(0);
    expect(files()).toHaveLength(2);
    const [full, next] = files().sort((a, b) => offsets(b).length - offsets(a).length);
    // Until its logs are durable, the full file still holds its records for a replay.
    expect(head(full!).gen).toBe(1);
    expect([...offsets(full!), ...offsets(next!)].sort((a, b) => a - b)).toEqual(
      Array.from({ length: 40 }, (_, i) => i),
    );
    held.release();
    await settle();
    expect(new Set(held.calls)).toEqual(new Set(logs));
    expect(head(full!).gen).toBe(2);
    expect(offsets(full!)).toEqual([]);
    const closing = journal.close(); // checkpoints the other file through the same hook
    await settle();
    held.release();
    await closing;
    expect(files()).toEqual([]);
  });

  it('group flushes land in the file and generation they are written in', async () => {
    const dir = folders.root();
    const log = join(dir, 'log-1.skr');
    writeFileSync(log, '');
    const { journal, files, offsets } = journalIn(dir, HEADER_BYTES + 64 * 1024, true);
    const frame = Buffer.alloc(3000, 0x62);
    // Two batches of 15 concurrent commits (one flush each); the second does not fit.
    for (const batch of [0, 1])
      await Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          journal.commit(`s${i % 4}`, 1, batch * 15 + i, frame, log),
        ),
      );
    await settle();
    const all = files().map(offsets);
    expect(all.sort((a, b) => a.length - b.length)).toEqual([
      [],
      Array.from({ length: 15 }, (_, i) => 15 + i),
    ]);
    await journal.close();
  });
});
