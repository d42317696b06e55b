// The SQLite peer of the commit-path targets (targets.mjs runs it): the same turn
// committed to a conversation table the way an SQLite-backed session store does it (one
// transaction: two message rows and the conversation's row updated), in WAL mode with
// `synchronous=FULL` (an fsync per commit: the durability of `sync: true`) and `NORMAL`
// (no fsync per commit: a machine crash may lose the last commits, as with `sync: false`;
// the setting LibSQL-based stores use), beside a raw append + fdatasync measured in the
// same process, interleaved in rounds. Needs `node:sqlite` (Node 22.13 or later); prints
// its lines, asserts nothing.
//
//   node bench/sqlite-peer.mjs <scratch folder>
import { fdatasyncSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fmt, interleaved } from './figures.mjs';
import { turnBytes, turnOf } from './turns.mjs';

const root = join(process.argv[2] ?? '.', 'sqlite-peer');
mkdirSync(root, { recursive: true });
const rounds = Number(process.env.BENCH_ROUNDS ?? 10);
const chunk = Number(process.env.BENCH_CHUNK ?? 150);
const many = Number(process.env.BENCH_LIVE ?? 3000);

const SCHEMA = `
  CREATE TABLE conversations (id TEXT PRIMARY KEY, title TEXT, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, message_count INTEGER NOT NULL);
  CREATE TABLE messages (id INTEGER PRIMARY KEY, conversation_id TEXT NOT NULL,
    seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL);
  CREATE UNIQUE INDEX messages_by_conversation ON messages (conversation_id, seq);`;

/** A database of `conversations` conversations committing turns round robin. */
function sqliteCommitter(name, conversations, synchronous) {
  const db = new DatabaseSync(join(root, `${name}.db`));
  db.exec(`PRAGMA journal_mode=WAL; PRAGMA synchronous=${synchronous};`);
  db.exec(SCHEMA);
  const now = () => new Date().toISOString();
  const create = db.prepare(
    'INSERT INTO conversations (id, title, created_at, updated_at, message_count) VALUES (?, ?, ?, ?, 0)',
  );
  db.exec('BEGIN');
  for (let c = 0; c < conversations; c++) create.run(`c${c}`, `conversation ${c}`, now(), now());
  db.exec('COMMIT');
  const count = db.prepare('SELECT message_count AS n FROM conversations WHERE id = ?');
  const insert = db.prepare(
    'INSERT INTO messages (conversation_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const touch = db.prepare(
    'UPDATE conversations SET updated_at = ?, message_count = ? WHERE id = ?',
  );
  let n = 0;
  const step = () => {
    const id = `c${n % conversations}`;
    const at = now();
    db.exec('BEGIN IMMEDIATE');
    let seq = Number(count.get(id).n);
    for (const m of turnOf(n)) insert.run(id, seq++, m.role, m.content, at);
    touch.run(at, seq, id);
    db.exec('COMMIT');
    n++;
  };
  return { step, db, close: () => db.close() };
}

/**
 * A raw append of the turn's JSON to one open file, with or without fdatasync; synchronous,
 * as SQLite's own writes and fsyncs are (no thread-pool round trip).
 */
function rawAppender(name, sync) {
  const fd = openSync(join(root, name), 'a', 0o600);
  let n = 0;
  return {
    step: () => {
      writeSync(fd, turnBytes(n++));
      if (sync) fdatasyncSync(fd);
    },
    close: () => {},
  };
}

/** Bytes per conversation after `turns` turns in each of `conversations` (WAL checkpointed). */
function bytesPerConversation(conversations, turns) {
  const c = sqliteCommitter('bytes', conversations, 'NORMAL');
  for (let i = 0; i < conversations * turns; i++) c.step();
  c.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  c.close();
  return statSync(join(root, 'bytes.db')).size / conversations;
}

const line = (label, value) => console.log(`  ${label.padEnd(52)}${value}`);
console.log(
  `SQLite peer (node:sqlite, SQLite ${new DatabaseSync(':memory:').prepare('SELECT sqlite_version() AS v').get().v}, WAL), same turn, ${rounds} interleaved rounds of ${chunk}:`,
);
const durable = await interleaved(
  {
    raw: rawAppender('raw', true),
    full1: sqliteCommitter('full1', 1, 'FULL'),
    fullMany: sqliteCommitter('fullMany', many, 'FULL'),
  },
  rounds,
  chunk,
);
line('raw append + blocking fdatasyncSync, 1 file', `${fmt(durable.median('raw'))} turns/s`);
line('SQLite synchronous=FULL, 1 conversation', `${fmt(durable.median('full1'))} turns/s`);
line(
  `SQLite synchronous=FULL, ${fmt(many)} conversations`,
  `${fmt(durable.median('fullMany'))} turns/s`,
);
line('ratio FULL(1) / raw', `${fmt(100 * durable.ratio('full1', 'raw'), 1)} %`);
line(`ratio FULL(${fmt(many)}) / raw`, `${fmt(100 * durable.ratio('fullMany', 'raw'), 1)} %`);
const loose = await interleaved(
  { raw: rawAppender('rawLoose', false), normal1: sqliteCommitter('normal1', 1, 'NORMAL') },
  rounds,
  chunk * 4,
);
line('raw append (writeSync), no fsync', `${fmt(loose.median('raw'))} turns/s`);
line('SQLite synchronous=NORMAL, 1 conversation', `${fmt(loose.median('normal1'))} turns/s`);
line('ratio NORMAL(1) / raw no fsync', `${fmt(100 * loose.ratio('normal1', 'raw'), 1)} %`);
line(
  'bytes per conversation, 200 turns: SQLite',
  `${fmt(bytesPerConversation(10, 200) / 1024)} KiB`,
);
