// Durable turns over pools of live sessions written round robin (issue 29): a turn is one
// commit of two ~1 KB messages with `expectedRevision`, one writer. At 3,000 sessions of
// 10 messages, 100 of 1,000 and 20 of 5,000, the store (`sync: true`) beside a raw append +
// blocking fdatasyncSync to one file per conversation and SQLite in WAL mode with
// `synchronous=FULL` (an fsync per commit) in this process, interleaved in rounds
// (medians; ratios are medians of per-round ratios). Asserts nothing.
import { closeSync, fdatasyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, interleaved } from './figures.mjs';
import { sqliteDriver, sqliteVersion } from './sqlite-driver.mjs';
import { turnBytes, turnOf } from './turns.mjs';

const { FileStore } = await import(process.env.BENCH_DIST ?? '../dist/index.js');

/** The first `n` messages of every conversation (history before the measured turns). */
const history = (n) => Array.from({ length: n / 2 }, (_, i) => turnOf(i)).flat();

/**
 * A store (`sync: true`) over `sessions` conversations of `messages` messages in `dir`,
 * created with `sync: false`: `step()` commits the next turn round robin.
 */
export async function storeRunner(dir, sessions, messages) {
  const setup = new FileStore({ dir, sync: false });
  for (let c = 0; c < sessions; c++)
    await setup.create({ id: `c${c}`, messages: history(messages) });
  await setup.close();
  const store = new FileStore({ dir });
  const revisions = new Array(sessions).fill(1);
  let n = 0;
  const step = async () => {
    const c = n % sessions;
    const r = await store.commit(`c${c}`, { expectedRevision: revisions[c], append: turnOf(n++) });
    revisions[c] = r.revision;
  };
  return { step, close: () => store.close() };
}

function rawRunner(dir, sessions, messages) {
  mkdirSync(dir);
  const start = Buffer.from(
    history(messages)
      .map((m) => `${JSON.stringify(m)}\n`)
      .join(''),
  );
  const fds = [];
  for (let c = 0; c < sessions; c++) {
    const fd = openSync(join(dir, `c${c}`), 'a', 0o600);
    writeSync(fd, start);
    fds.push(fd);
  }
  let n = 0;
  return {
    step: () => {
      const fd = fds[n % sessions];
      writeSync(fd, turnBytes(n++));
      fdatasyncSync(fd);
    },
    close: () => {
      for (const fd of fds) closeSync(fd);
    },
  };
}

/** One transaction per turn: the conversation's count, two message rows, its row updated. */
function sqliteRunner(driver, path, sessions, messages) {
  const db = driver.open(path);
  db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;');
  db.exec(`CREATE TABLE conversations (id TEXT PRIMARY KEY, title TEXT, updated_at TEXT NOT NULL,
      message_count INTEGER NOT NULL);
    CREATE TABLE messages (id INTEGER PRIMARY KEY, conversation_id TEXT NOT NULL,
      seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE UNIQUE INDEX messages_by_conversation ON messages (conversation_id, seq);`);
  const insert = db.prepare(
    'INSERT INTO messages (conversation_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const count = db.prepare('SELECT message_count AS n FROM conversations WHERE id = ?');
  const touch = db.prepare(
    'UPDATE conversations SET updated_at = ?, message_count = ? WHERE id = ?',
  );
  const create = db.prepare('INSERT INTO conversations VALUES (?, ?, ?, 0)');
  const at = new Date().toISOString();
  db.exec('BEGIN');
  for (let c = 0; c < sessions; c++) {
    create.run(`c${c}`, `conversation ${c}`, at);
    let seq = 0;
    for (const m of history(messages)) insert.run(`c${c}`, seq++, m.role, m.content, at);
    touch.run(at, seq, `c${c}`);
  }
  db.exec('COMMIT');
  let n = 0;
  return {
    db,
    step: () => {
      const id = `c${n % sessions}`;
      const now = new Date().toISOString();
      db.exec('BEGIN IMMEDIATE');
      let seq = Number(count.get(id).n);
      for (const m of turnOf(n++)) insert.run(id, seq++, m.role, m.content, now);
      touch.run(now, seq, id);
      db.exec('COMMIT');
    },
    close: () => db.close(),
  };
}

/** Measures every pool size and prints its figures and ratios. */
export async function pools(root) {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
  const chunk = Number(process.env.BENCH_CHUNK ?? 300);
  let driver;
  try {
    driver = await sqliteDriver();
  } catch (e) {
    console.log(`  SQLite not run: ${e.message}`);
  }
  const sizes = [
    [3000, 10],
    [100, 1000],
    [20, 5000],
  ];
  console.log(
    `durable turns over live sessions, round robin (turn = 2 messages of ~1 KB, expectedRevision), ${rounds} interleaved rounds of ${chunk}, medians:`,
  );
  const line = (label, value) => console.log(`  ${label.padEnd(56)}${value}`);
  for (const [sessions, messages] of sizes) {
    const base = join(root, `pool-${sessions}`);
    mkdirSync(base, { recursive: true });
    const runners = {
      raw: rawRunner(join(base, 'raw'), sessions, messages),
      store: await storeRunner(join(base, 'store'), sessions, messages),
    };
    if (driver) runners.sqlite = sqliteRunner(driver, join(base, 'q.db'), sessions, messages);
    const version = runners.sqlite ? sqliteVersion(runners.sqlite.db) : '';
    // Warm: every conversation once in each (the store learns each session's tip).
    for (let i = 0; i < sessions; i++) for (const r of Object.values(runners)) await r.step();
    const m = await interleaved(runners, rounds, chunk);
    console.log(`  ${fmt(sessions)} sessions of ${fmt(messages)} messages:`);
    line('  raw append + fdatasync, a file each', `${fmt(m.median('raw'))} turns/s`);
    if (driver)
      line(`  SQLite ${version} WAL FULL (${driver.name})`, `${fmt(m.median('sqlite'))} turns/s`);
    line('  sync: true', `${fmt(m.median('store'))} turns/s`);
    line('  ratio store / raw', `${fmt(100 * m.ratio('store', 'raw'), 1)} %  (target >= 70 %)`);
    if (driver) {
      line(
        '  ratio store / SQLite FULL',
        `${fmt(m.ratio('store', 'sqlite'), 2)}x  (target >= 1.0x)`,
      );
      line('  ratio SQLite FULL / raw', `${fmt(100 * m.ratio('sqlite', 'raw'), 1)} %`);
    }
  }
  console.log('');
}
