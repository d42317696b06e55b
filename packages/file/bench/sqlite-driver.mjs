// SQLite for the benchmarks, in this process: `node:sqlite` where this Node has it (22.13
// and later), else better-sqlite3 (BETTER_SQLITE3, pinned), installed on first use with npm
// into node_modules/.cache/sessionkit-bench (its native build is no dependency of the
// package: CI never compiles it). `open(path)` gives `{ exec, prepare, close, version }`
// with `prepare(sql).get/run(...)`, the subset both drivers share.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BETTER_SQLITE3 = 'better-sqlite3@12.11.1';
const cache = fileURLToPath(new URL('../node_modules/.cache/sessionkit-bench/', import.meta.url));

/** `{ name, open(path) }` of the SQLite driver this process can use, or throws why not. */
export async function sqliteDriver() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 13)) {
    const { DatabaseSync } = await import('node:sqlite');
    return { name: 'node:sqlite', open: (path) => new DatabaseSync(path) };
  }
  if (!existsSync(join(cache, 'node_modules', 'better-sqlite3'))) {
    mkdirSync(cache, { recursive: true });
    const r = spawnSync(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', cache, BETTER_SQLITE3],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 10 * 60_000 },
    );
    if (r.status !== 0)
      throw new Error(`npm install ${BETTER_SQLITE3} failed: ${r.stderr.trim().split('\n').pop()}`);
  }
  const Database = createRequire(cache)('better-sqlite3');
  return { name: BETTER_SQLITE3, open: (path) => new Database(path) };
}

/** The version of SQLite a database of the driver runs. */
export function sqliteVersion(db) {
  return db.prepare('SELECT sqlite_version() AS v').get().v;
}
