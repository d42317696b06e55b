// The commit journal (io/commit-journal.ts): written in place inside allocated space, it
// starts over with the next generation after a checkpoint, and replay reads only the
// records of the generation its header names.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFrames } from '../src/format/frame.js';
import { CommitJournal, HEADER_BYTES, type JournalOwnerMeta } from '../src/io/commit-journal.js';
import { LogSyncer } from '../src/io/log-syncer.js';
import { journalRecords } from '../src/session/journal-replay.js';
import { tempFolders } from './helpers.js';

const folders = tempFolders();

function journalIn(dir: string, bytes: number, group = false) {
  const stats = { groupFlushes: 0, groupCommits: 0, inlineSyncs: 0 };
  const journal = new CommitJournal({
    dir,
    group,
    groupMs: 0,
    syncer: new LogSyncer(2, stats),
    stats,
    bytes,
  });
  const file = () => join(dir, readdirSync(dir).find((n) => n.endsWith('.skj'))!);
  const head = () =>
    parseFrames<JournalOwnerMeta>(readFileSync(file()).subarray(0, HEADER_BYTES)).frames[0]!.meta;
  return { journal, file, head };
}

describe('commit journal', () => {
  it('keeps its size once allocated and starts over with a new generation when full', async () => {
    const dir = folders.root();
    const log = join(dir, 'log-1.skr');
    writeFileSync(log, '');
    const space = 64 * 1024;
    const { journal, file, head } = journalIn(dir, HEADER_BYTES + space);
    const frame = Buffer.alloc(2000, 0x61);
    for (let i = 0; i < 20; i++) await journal.commit('s', 1, i * 2000, frame, log);
    const size = statSync(file()).size;
    expect(size).toBe(HEADER_BYTES + space); // allocated once, written in place
    expect(head().gen).toBe(1);
    expect(journalRecords(readFileSync(file()), head()).get('s')).toHaveLength(20);
    // 32 more records do not fit: a checkpoint, then generation 2 from the start.
    for (let i = 20; i < 52; i++) await journal.commit('s', 1, i * 2000, frame, log);
    expect(statSync(file()).size).toBe(size);
    expect(head().gen).toBe(2);
    const current = journalRecords(readFileSync(file()), head()).get('s')!;
    expect(current.map((r) => r.offset / 2000)).toEqual(
      Array.from({ length: current.length }, (_, i) => 52 - current.length + i),
    );
    // The older generation's records still follow on disk, and are not read.
    const bytes = readFileSync(file());
    const end = parseFrames(bytes, HEADER_BYTES).frames[current.length - 1]!.end;
    expect(bytes.subarray(end).some((b) => b !== 0)).toBe(true);
    await journal.close();
    expect(readdirSync(dir).filter((n) => n.endsWith('.skj'))).toEqual([]);
  });

  it('group flushes land in the generation they are written in', async () => {
    const dir = folders.root();
    const log = join(dir, 'log-1.skr');
    writeFileSync(log, '');
    const { journal, file, head } = journalIn(dir, HEADER_BYTES + 64 * 1024, true);
    const frame = Buffer.alloc(3000, 0x62);
    // Two batches of 15 concurrent commits (one flush each); the second does not fit.
    for (const batch of [0, 1])
      await Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          journal.commit(`s${i % 4}`, 1, batch * 15 + i, frame, log),
        ),
      );
    const records = journalRecords(readFileSync(file()), head());
    const offsets = [...records.values()].flat().map((r) => r.offset);
    expect(head().gen).toBe(2);
    expect(offsets.sort((a, b) => a - b)).toEqual(Array.from({ length: 15 }, (_, i) => 15 + i));
    await journal.close();
  });
});
