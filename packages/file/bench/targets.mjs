// The commit-path targets (turn = 2 messages of ~1 KB appended to a conversation), each
// measured as a ratio against a raw append on an open descriptor in the same run:
//   sync: true at 1 and at 3,000 live sessions (round robin)  >= 70 % of raw append + fdatasync
//   sync: 'group' with 8 concurrent writers                    >= 3x sync: true with 8 writers
//   sync: false                                                >= 30 % of raw append, no fsync
//   bytes per conversation after 200 turns                     <= 1.5x raw append's
// Measures of one group run interleaved in rounds (a burst of load from another tenant of
// the machine hits all of them alike); figures are medians, ratios medians of per-round
// ratios. Asserts nothing.
import { spawnSync } from 'node:child_process';
import { fdatasyncSync, promises as fsp, readdirSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { fmt, interleaved, median } from './figures.mjs';
import { turnBytes, turnOf } from './turns.mjs';

const { FileStore } = await import(process.env.BENCH_DIST ?? '../dist/index.js');

/**
 * Raw appends of a turn's JSON to `files` open descriptors, round robin; `sync`: false,
 * true (fdatasync in the thread pool, as `FileHandle.datasync` does) or 'inline' (a
 * blocking `fdatasyncSync` on the event loop).
 */
async function rawAppender(root, name, files, sync) {
  const dir = join(root, name);
  await fsp.mkdir(dir);
  const handles = [];
  for (let i = 0; i < files; i++) handles.push(await fsp.open(join(dir, `c${i}`), 'a', 0o600));
  let n = 0;
  return {
    step: async () => {
      const h = handles[n % files];
      if (sync === 'inline') {
        writeSync(h.fd, turnBytes(n++));
        fdatasyncSync(h.fd);
        return;
      }
      await h.write(turnBytes(n++));
      if (sync) await h.datasync();
    },
    close: async () => {
      for (const h of handles) await h.close();
    },
  };
}

/**
 * Raw overwrites of a file preallocated with zeros, in turn-sized steps, each fdatasync'd:
 * what a log written into space allocated beforehand (as SQLite's WAL and PostgreSQL's WAL
 * segments are) would pay per commit, with no file-size change for the fsync to journal.
 */
async function rawPreallocated(root, name, turns) {
  const path = join(root, name);
  const h = await fsp.open(path, 'w+', 0o600);
  await h.write(Buffer.alloc(turns * turnBytes(0).length * 2));
  await h.datasync();
  let n = 0;
  let position = 0;
  return {
    step: async () => {
      const bytes = turnBytes(n++);
      await h.write(bytes, 0, bytes.length, position);
      position += bytes.length;
      await h.datasync();
    },
    close: () => h.close(),
  };
}

/** A store committing turns round robin over `sessions` sessions (created beforehand). */
async function storeCommitter(root, name, sessions, options) {
  const dir = join(root, name);
  const setup = new FileStore({ dir, sync: false });
  for (let i = 0; i < sessions; i++) await setup.create({ id: `c${i}` });
  await setup.close();
  const store = new FileStore({ dir, ...options });
  let n = 0;
  const step = () => store.commit(`c${n % sessions}`, { append: turnOf(n++) });
  for (let i = 0; i < Math.min(sessions, 3000); i++) await step(); // warm: every session once
  return { step, close: () => store.close() };
}

/** Commits per second of `writers` concurrent loops, each on its own session. */
async function concurrentRate(root, name, writers, options, perWriter) {
  const dir = join(root, name);
  const store = new FileStore({ dir, ...options });
  for (let w = 0; w < writers; w++) await store.create({ id: `w${w}` });
  for (let w = 0; w < writers; w++) await store.commit(`w${w}`, { append: turnOf(w) });
  const measure = async () => {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i++) await store.commit(`w${w}`, { append: turnOf(i) });
      }),
    );
    return (writers * perWriter * 1000) / (performance.now() - t0);
  };
  return { measure, close: () => store.close() };
}

/** Bytes of the files under `dir`, in total and by kind (snapshots and logs, search, index). */
/**
 * The best ratio group commit can reach on this disk: 8 concurrent appends + fdatasyncs of
 * 8 files (what 8 writers with an fsync each do; the kernel already merges their journal
 * commits) against 8 appends to 8 files plus one append + fdatasync of a shared journal.
 */
async function rawGroupCeiling(root, rounds, perWriter) {
  const dir = join(root, 'raw-group');
  await fsp.mkdir(dir);
  const files = [];
  for (let i = 0; i < 9; i++) files.push(await fsp.open(join(dir, `f${i}`), 'a', 0o600));
  const eight = [];
  const shared = [];
  for (let r = 0; r < rounds; r++) {
    let t0 = performance.now();
    await Promise.all(
      files.slice(0, 8).map(async (h, w) => {
        for (let i = 0; i < perWriter; i++) {
          await h.write(turnBytes(w * perWriter + i));
          await h.datasync();
        }
      }),
    );
    eight.push((8 * perWriter * 1000) / (performance.now() - t0));
    t0 = performance.now();
    for (let i = 0; i < perWriter; i++) {
      // Synchronous appends, as the store makes them; one thread-pool hop, the fdatasync.
      const batch = [];
      for (let w = 0; w < 8; w++) {
        const bytes = turnBytes(w * perWriter + i);
        writeSync(files[w].fd, bytes);
        batch.push(bytes);
      }
      writeSync(files[8].fd, Buffer.concat(batch));
      await files[8].datasync();
    }
    shared.push((8 * perWriter * 1000) / (performance.now() - t0));
  }
  for (const h of files) await h.close();
  return {
    eight: median(eight),
    shared: median(shared),
    ratio: median(shared.map((x, i) => x / eight[i])),
  };
}

function folderBytes(dir, kinds = { total: 0, transcript: 0, search: 0, index: 0 }) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      folderBytes(path, kinds);
      continue;
    }
    const size = statSync(path).size;
    kinds.total += size;
    if (/^(snap|log)-\d+\.skr$/.test(entry.name)) kinds.transcript += size;
    else if (entry.name === 'search.txt') kinds.search += size;
    else if (entry.name === 'index.log') kinds.index += size;
  }
  return kinds;
}

/**
 * Bytes per conversation after `turns` turns: the store's folder against raw appends,
 * the conversations written turn by turn; also the ratio after each of `checkpoints`
 * turns (it moves between folds: a fold shrinks it).
 */
async function bytesPerConversation(root, conversations, turns, checkpoints) {
  const dir = join(root, 'bytes');
  const store = new FileStore({ dir, sync: false });
  const raw = join(root, 'bytes-raw');
  await fsp.mkdir(raw);
  const handles = [];
  for (let c = 0; c < conversations; c++) {
    await store.create({ id: `b${c}`, title: `conversation ${c}` });
    handles.push(await fsp.open(join(raw, `b${c}`), 'a'));
  }
  const along = [];
  for (let t = 0; t < turns; t++) {
    for (let c = 0; c < conversations; c++) {
      await store.commit(`b${c}`, { append: turnOf(c * turns + t), increment: { turnCount: 1 } });
      await handles[c].write(turnBytes(c * turns + t));
    }
    if (checkpoints.includes(t + 1)) along.push(folderBytes(dir).total / folderBytes(raw).total);
  }
  for (const h of handles) await h.close();
  await store.close();
  const per = (kinds) =>
    Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, v / conversations]));
  return { store: per(folderBytes(dir)), raw: folderBytes(raw).total / conversations, along };
}

/** Runs every target measure and prints the figures and ratios. */
export async function targets(root) {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 10);
  const chunk = Number(process.env.BENCH_CHUNK ?? 150);
  const many = Number(process.env.BENCH_LIVE ?? 3000);
  console.log(
    `commit-path targets (turn = 2 messages of ~1 KB), ${rounds} interleaved rounds of ${chunk}, medians:`,
  );
  const durable = await interleaved(
    {
      raw1: await rawAppender(root, 'raw1', 1, true),
      store1: await storeCommitter(root, 'store1', 1, {}),
      rawInline1: await rawAppender(root, 'rawInline1', 1, 'inline'),
      storePooled1: await storeCommitter(root, 'storePooled1', 1, { inlineSyncMs: 0 }),
      rawMany: await rawAppender(root, 'rawMany', many, true),
      storeMany: await storeCommitter(root, 'storeMany', many, {}),
      store30: await storeCommitter(root, 'store30', 30, {}),
      rawPre: await rawPreallocated(root, 'rawPre', rounds * chunk),
    },
    rounds,
    chunk,
  );
  const line = (label, value, note = '') => console.log(`  ${label.padEnd(52)}${value}${note}`);
  const turnsLine = (label, key) => line(label, `${fmt(durable.median(key))} turns/s`);
  const percentLine = (label, key, base, note = '') =>
    line(label, `${fmt(100 * durable.ratio(key, base), 1)} %`, note);
  turnsLine('raw append + fdatasync, 1 file', 'raw1');
  turnsLine('sync: true, 1 live session', 'store1');
  turnsLine('sync: true, 30 live sessions (round robin)', 'store30');
  turnsLine(`raw append + fdatasync, ${fmt(many)} files (round robin)`, 'rawMany');
  turnsLine(`sync: true, ${fmt(many)} live sessions (round robin)`, 'storeMany');
  percentLine('ratio sync:true(1) / raw', 'store1', 'raw1', '  (target >= 70 %)');
  percentLine(
    `ratio sync:true(${fmt(many)}) / raw(${fmt(many)})`,
    'storeMany',
    'rawMany',
    '  (target >= 70 %)',
  );
  percentLine(`ratio sync:true(${fmt(many)}) / raw(1 file)`, 'storeMany', 'raw1');
  percentLine('ratio sync:true(30) / raw(1 file)', 'store30', 'raw1');
  // The store's lone commit fdatasyncs inline (`inlineSyncMs`); the same append made
  // inline, and the store held to the thread pool, show what that choice is worth.
  turnsLine('raw append + blocking fdatasyncSync, 1 file', 'rawInline1');
  turnsLine('sync: true, 1 session, inlineSyncMs: 0 (pool)', 'storePooled1');
  percentLine('ratio sync:true(1) / raw with fdatasyncSync', 'store1', 'rawInline1');
  percentLine('ratio sync:true(1), thread pool / raw', 'storePooled1', 'raw1');
  turnsLine('raw overwrite of preallocated space + fdatasync', 'rawPre');
  percentLine('ratio raw preallocated / raw append (1 file)', 'rawPre', 'raw1');

  // Eight concurrent writers, each on its own session: fsync per commit against group commit.
  const perWriter = Number(process.env.BENCH_GROUP_TURNS ?? 60);
  const single = await concurrentRate(root, 'eight-sync', 8, {}, perWriter);
  // BENCH_NO_GROUP=1 for a build without group commit (a baseline): 'group' is then true.
  const groupSync = process.env.BENCH_NO_GROUP ? true : 'group';
  const grouped = await concurrentRate(root, 'eight-group', 8, { sync: groupSync }, perWriter);
  // No fsync at all: what the eight writers' work on the event loop allows, the bound of
  // any durable mode (measured in the same rounds).
  const unsynced = await concurrentRate(root, 'eight-loose', 8, { sync: false }, perWriter);
  const g = { single: [], grouped: [], unsynced: [] };
  for (let r = 0; r < rounds; r++) {
    g.single.push(await single.measure());
    g.grouped.push(await grouped.measure());
    g.unsynced.push(await unsynced.measure());
  }
  await single.close();
  await grouped.close();
  await unsynced.close();
  const ceiling = await rawGroupCeiling(root, rounds, perWriter);
  line('sync: true, 8 concurrent writers', `${fmt(median(g.single))} turns/s`);
  line("sync: 'group', 8 concurrent writers", `${fmt(median(g.grouped))} turns/s`);
  line(
    "ratio 'group'(8) / sync:true(8)",
    `${fmt(median(g.grouped.map((x, i) => x / g.single[i])), 2)}x`,
    '  (target >= 3x)',
  );
  line('sync: false, 8 concurrent writers (no fsync)', `${fmt(median(g.unsynced))} turns/s`);
  line(
    'ratio sync:false(8) / sync:true(8)',
    `${fmt(median(g.unsynced.map((x, i) => x / g.single[i])), 2)}x`,
    '  (no durable mode can beat it)',
  );
  line('raw: 8 files, each append + fdatasync, concurrent', `${fmt(ceiling.eight)} turns/s`);
  line('raw: 8 appends + 1 fdatasync of a shared file', `${fmt(ceiling.shared)} turns/s`);
  line(
    'ratio raw shared / raw eight',
    `${fmt(ceiling.ratio, 2)}x`,
    "  (the disk's bound on 'group' / sync:true)",
  );

  // No fsync at all: measured apart, after the durable ones, so the dirty pages it leaves
  // do not slow their fsyncs.
  const loose = await interleaved(
    {
      rawLoose: await rawAppender(root, 'rawLoose', 1, false),
      storeLoose: await storeCommitter(root, 'storeLoose', 1, { sync: false }),
    },
    rounds,
    chunk * 4,
  );
  line('raw append, no fsync', `${fmt(loose.median('rawLoose'))} turns/s`);
  line('sync: false, 1 live session', `${fmt(loose.median('storeLoose'))} turns/s`);
  line(
    'ratio sync:false / raw no fsync',
    `${fmt(100 * loose.ratio('storeLoose', 'rawLoose'), 1)} %`,
    '  (target >= 30 %)',
  );

  const checkpoints = [25, 50, 75, 100, 150, 198, 200];
  const bytes = await bytesPerConversation(root, 10, 200, checkpoints);
  const kib = (n) => `${fmt(n / 1024)} KiB`;
  const b = bytes.store;
  line(
    'bytes per conversation, 200 turns: store',
    kib(b.total),
    `  (snapshots + log ${kib(b.transcript)}, search ${kib(b.search)}, index share ${kib(b.index)})`,
  );
  line('bytes per conversation, 200 turns: raw append', kib(bytes.raw));
  line('ratio store / raw', `${fmt(b.total / bytes.raw, 2)}x`, '  (target <= 1.5x)');
  line(
    'ratio store / raw after n turns (n: ratio)',
    bytes.along.map((r, i) => `${checkpoints[i]}: ${fmt(r, 2)}x`).join(', '),
  );
  console.log('');
  if (!process.env.BENCH_NO_PEER) sqlitePeer(root);
}

/** The Node that runs the SQLite peer when this one has no `node:sqlite` (before 22.13). */
const PEER_NODE = 'node@22.23.3';

/**
 * Runs `sqlite-peer.mjs` (the same turn in SQLite, beside its own raw measure): on this
 * Node when it has `node:sqlite`, otherwise on PEER_NODE from the npm registry. A peer
 * that cannot run is reported, not fatal.
 */
function sqlitePeer(root) {
  const script = fileURLToPath(new URL('./sqlite-peer.mjs', import.meta.url));
  const [major, minor] = process.versions.node.split('.').map(Number);
  const own = major > 22 || (major === 22 && minor >= 13);
  const r = spawnSync(
    own ? process.execPath : 'npx',
    own ? [script, root] : ['--yes', PEER_NODE, script, root],
    {
      stdio: ['ignore', 'inherit', 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
      timeout: 10 * 60_000,
    },
  );
  if (r.status !== 0) {
    const why = r.error?.message ?? r.stderr.trim().split('\n').pop() ?? `exit ${r.status}`;
    console.log(`  SQLite peer not run: ${why}`);
  }
  console.log('');
}
