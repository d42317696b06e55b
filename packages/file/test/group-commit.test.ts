// Group commit (`sync: 'group'`): concurrent commits share the journal's fsync, and after a
// machine crash (simulated: a session log loses its unsynced tail) the next store to open
// the folder writes the acknowledged records back from the journal.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message } from '@sessionkit/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeFrame, parseFrames } from '../src/format/frame.js';
import { FORMAT_VERSION } from '../src/format/version.js';
import { FileStore } from '../src/index.js';
import { currentBootId, HEADER_BYTES, type JournalOwnerMeta } from '../src/io/journal-file.js';
import { journalRecords } from '../src/session/journal-replay.js';
import { storeFolderFixture } from './helpers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const fixture = storeFolderFixture();
const contents = (messages: unknown[]) => messages.map((m) => (m as Message).content);

beforeAll(() => {
  if (!existsSync(join(here, '..', 'dist', 'index.js')))
    throw new Error('run `pnpm --filter @sessionkit/file build` first');
});

describe("sync: 'group'", () => {
  it('acknowledges concurrent commits of many sessions after shared journal flushes', async () => {
    const s = fixture.open({ sync: 'group' }); // groupCommitMs 0: no timer, batching by fsync
    const ids = Array.from({ length: 8 }, (_, i) => `g${i}`);
    for (const id of ids) await s.create({ id });
    await Promise.all(
      ids.map(async (id) => {
        for (let n = 0; n < 5; n++)
          await s.commit(id, { append: [{ role: 'user', content: `${id}:${n}` }] });
      }),
    );
    // Every commit was acknowledged by a flush, and flushes were shared: the eight
    // writers' commits reach the journal in the same turn of the event loop.
    expect(s.stats.groupCommits).toBe(40);
    expect(s.stats.groupFlushes).toBeGreaterThan(0);
    expect(s.stats.groupFlushes).toBeLessThanOrEqual(20);
    const journals = readdirSync(join(fixture.dir, 'journal'));
    expect(journals).toHaveLength(1);
    // Every record went to the journal too: 40 records after its padded header, then the
    // zeros of the space allocated for more.
    const journal = readFileSync(join(fixture.dir, 'journal', journals[0]!));
    expect(parseFrames(journal, HEADER_BYTES).frames.length).toBe(40);
    const reader = fixture.open();
    for (const id of ids)
      expect(contents(await reader.loadMessages(id))).toEqual(
        [0, 1, 2, 3, 4].map((n) => `${id}:${n}`),
      );
    await s.close();
    // close() fsyncs the logs and removes the journal.
    expect(readdirSync(join(fixture.dir, 'journal'))).toEqual([]);
  });

  it.each(['group', 'true'])(
    'sync: %s: after a simulated machine crash, replays acknowledged records the logs lost',
    async (mode) => {
      const setup = fixture.open();
      await setup.create({ id: 'm', folder: 'crash' });
      await setup.create({ id: 'm-b', folder: 'crash' });
      await setup.close();
      const child = spawnSync(
        process.execPath,
        [join(here, 'fixtures', 'group-child.mjs'), fixture.dir, 'm', '20', mode],
        { encoding: 'utf8' },
      );
      expect(child.status).toBe(0);
      expect(child.stdout.split('\n').filter((l) => l.startsWith('ack '))).toHaveLength(40);
      expect(readdirSync(join(fixture.dir, 'journal'))).toHaveLength(1); // left behind
      // The power loss: the logs lose everything after their first few records.
      for (const id of ['m', 'm-b']) {
        const log = join(fixture.dir, 'sessions', id, 'log-1.skr');
        const first = parseFrames(readFileSync(log)).frames[3]!;
        truncateSync(log, first.start);
        expect(statSync(log).size).toBe(first.start);
      }
      const after = fixture.open();
      for (const id of ['m', 'm-b']) {
        const s = await after.load(id);
        expect(contents(s.messages)).toEqual(Array.from({ length: 20 }, (_, n) => `q${n}`));
        expect([s.revision, s.turnCount]).toEqual([21, 20]);
      }
      const listed = await after.list({ folder: 'crash' });
      expect(listed.map((e) => [e.id, e.revision, e.messageCount])).toEqual(
        [
          ['m-b', 21, 20],
          ['m', 21, 20],
        ].sort((a, b) => (listed[0]?.id === a[0] ? -1 : listed[0]?.id === b[0] ? 1 : 0)),
      );
      expect(readdirSync(join(fixture.dir, 'journal'))).toEqual([]);
      // A replay writes nothing twice: the next commit appends after the replayed records.
      await after.commit('m', { append: [{ role: 'user', content: 'after' }] });
      expect((await fixture.open().loadMessages('m')).length).toBe(21);
      expect((await after.repair()).indexEntriesFixed).toBe(0);
    },
  );

  it.each(['true', 'group'])(
    'sync: %s: a power loss after the store switched journal files is replayed from both',
    async (mode) => {
      const setup = fixture.open();
      await setup.create({ id: 'w' });
      await setup.create({ id: 'w-b' });
      await setup.close();
      // 40 turns of ~500 KB: more than one 16 MiB journal file holds.
      const child = spawnSync(
        process.execPath,
        [join(here, 'fixtures', 'group-child.mjs'), fixture.dir, 'w', '20', mode, '500000'],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      );
      expect(child.status).toBe(0);
      expect(child.stdout.split('\n').filter((l) => l.startsWith('ack '))).toHaveLength(40);
      const journalDir = join(fixture.dir, 'journal');
      const journals = readdirSync(journalDir).map((n) => readFileSync(join(journalDir, n)));
      expect(journals).toHaveLength(2);
      // The worst power loss the protocol allows: every log loses all it holds from the
      // first record any journal file still has (whatever a checkpoint synced stays).
      // (A log folded at 8 MiB into a snapshot, which was fsync'd, keeps only later records.)
      for (const id of ['w', 'w-b']) {
        const folder = join(fixture.dir, 'sessions', id);
        const logName = readdirSync(folder).find((n) => /^log-\d+\.skr$/.test(n))!;
        const snapRev = Number(/\d+/.exec(logName)![0]);
        const offsets = journals.flatMap((buf) => {
          const head = parseFrames<JournalOwnerMeta>(buf.subarray(0, HEADER_BYTES)).frames[0]!;
          const records = journalRecords(buf, head.meta).get(id) ?? [];
          return records.filter((r) => r.snapRev === snapRev).map((r) => r.offset);
        });
        const log = join(folder, logName);
        const cut = Math.min(...offsets);
        expect(cut).toBeLessThan(statSync(log).size);
        truncateSync(log, cut);
      }
      const after = fixture.open();
      for (const id of ['w', 'w-b']) {
        const s = await after.load(id);
        expect(contents(s.messages).map((c) => String(c).split(':')[0])).toEqual(
          Array.from({ length: 20 }, (_, n) => `q${n}`),
        );
        expect([s.revision, s.turnCount]).toEqual([21, 20]);
      }
      expect(readdirSync(journalDir)).toEqual([]);
      expect((await after.repair()).indexEntriesFixed).toBe(0);
    },
    60_000,
  );

  it.runIf(process.platform === 'linux')(
    "replays a dead writer's two journal files in log order, never leaving a gap",
    async () => {
      const setup = fixture.open({ sync: false });
      await setup.create({ id: 'r' });
      for (let n = 0; n < 4; n++)
        await setup.commit('r', { append: [{ role: 'user', content: `q${n}` }] });
      await setup.close();
      const log = join(fixture.dir, 'sessions', 'r', 'log-1.skr');
      const frames = parseFrames(readFileSync(log)).frames;
      const bytes = readFileSync(log);
      const record = (i: number) => {
        const f = frames[i]!;
        const meta = {
          v: FORMAT_VERSION,
          kind: 'record',
          gen: 1,
          id: 'r',
          snapRev: 1,
          offset: f.start,
        };
        return encodeFrame(meta, bytes.subarray(f.start, f.end));
      };
      // The journal files of a writer that is gone (a finished child's pid), as a store
      // leaves them after switching files: the first listed holds the later records.
      const gone = spawnSync(process.execPath, ['-e', '']).pid!;
      const journalDir = join(fixture.dir, 'journal');
      const file = (token: string, records: Buffer[]) => {
        const pidNamespace = readlinkSync('/proc/self/ns/pid');
        const owner = { pid: gone, hostname: hostname(), pidNamespace, token };
        const meta: JournalOwnerMeta = { v: FORMAT_VERSION, kind: 'journal', owner, gen: 1 };
        const bootId = currentBootId();
        if (bootId !== undefined) meta.bootId = bootId;
        const header = Buffer.alloc(HEADER_BYTES);
        encodeFrame(meta).copy(header);
        return Buffer.concat([header, ...records, Buffer.alloc(4096)]);
      };
      writeFileSync(join(journalDir, 'one.skj'), '');
      writeFileSync(join(journalDir, 'two.skj'), '');
      const [listedFirst, listedSecond] = readdirSync(journalDir);
      writeFileSync(join(journalDir, listedFirst!), file('a', [record(2), record(3)]));
      writeFileSync(join(journalDir, listedSecond!), file('b', [record(1)]));
      truncateSync(log, frames[1]!.start); // the power loss: records 2 to 4 lost
      // A reader watching the log while the next store replays: it never sees damage.
      let damaged = 0;
      let watching = true;
      const watch = () => {
        if (!watching) return;
        if (parseFrames(readFileSync(log)).corrupt) damaged++;
        setImmediate(watch);
      };
      watch();
      const after = fixture.open();
      const s = await after.load('r');
      watching = false;
      expect(contents(s.messages)).toEqual(['q0', 'q1', 'q2', 'q3']);
      expect(damaged).toBe(0);
      expect(readdirSync(journalDir)).toEqual([]);
    },
  );

  it('with groupCommitMs, a commit that arrives during the gap joins the next flush', async () => {
    // groupCommitMs 1000: after the first flush, the next may not start for a second, so
    // a commit (of another session: one session's commits run one at a time) made 10 ms
    // after another shares its flush; with 0, each would have its own.
    const s = fixture.open({ sync: 'group', groupCommitMs: 1000 });
    await s.create({ id: 'gap-a' });
    await s.create({ id: 'gap-b' });
    await s.commit('gap-a', { append: [{ role: 'user', content: 'first' }] });
    expect(s.stats.groupFlushes).toBe(1);
    const second = s.commit('gap-a', { append: [{ role: 'user', content: 'second' }] });
    await new Promise((r) => setTimeout(r, 10));
    const third = s.commit('gap-b', { append: [{ role: 'user', content: 'third' }] });
    await Promise.all([second, third]);
    expect([s.stats.groupFlushes, s.stats.groupCommits]).toEqual([2, 3]);
    const reader = fixture.open();
    expect((await reader.loadMessages('gap-a')).length).toBe(2);
    expect((await reader.loadMessages('gap-b')).length).toBe(1);
    await s.close();
  });

  it('rejects a bad sync or groupCommitMs with invalid_argument', () => {
    expect(() => new FileStore({ dir: '/tmp/x', sync: 'yes' as never })).toThrow(/sync/);
    expect(() => new FileStore({ dir: '/tmp/x', groupCommitMs: -1 })).toThrow(/groupCommitMs/);
    expect(() => new FileStore({ dir: '/tmp/x', leaseMs: -1 })).toThrow(/leaseMs/);
  });
});
