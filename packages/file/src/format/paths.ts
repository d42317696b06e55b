// Where everything lives in a store folder: the store's files, each session's folder, and
// the snapshot and log revisions a session folder listing names.

import { join, sep } from 'node:path';

/** Paths of a store rooted at `root`. */
export function storePaths(root: string) {
  return {
    root,
    format: join(root, 'format.json'),
    sessions: join(root, 'sessions'),
    locks: join(root, 'locks'),
    /** Want files: a waiter asks the holder of a session's lease to release it. */
    wants: join(root, 'locks', 'wants'),
    trash: join(root, 'trash'),
    index: join(root, 'index.log'),
    /** Group-commit journals, one per store writing with `sync: 'group'`. */
    journal: join(root, 'journal'),
    // Store-wide locks start with "." so no session id (which cannot) can collide.
    indexLock: join(root, 'locks', '.index.lock'),
    router: join(root, 'router.json'),
    routerLock: join(root, 'locks', '.router.lock'),
    formatLock: join(root, 'locks', '.format.lock'),
  };
}
export type StorePaths = ReturnType<typeof storePaths>;

/** Paths of one session's folder. */
export function sessionPaths(paths: StorePaths, id: string) {
  const dir = join(paths.sessions, id);
  return {
    dir,
    lock: join(paths.locks, `${id}.lock`),
    // A file name joined to a normalized folder: no `join` (which re-normalizes) per call.
    snapshot: (rev: number) => `${dir}${sep}snap-${rev}.skr`,
    log: (rev: number) => `${dir}${sep}log-${rev}.skr`,
    events: join(dir, 'events.skr'),
    status: join(dir, 'status.json'),
    search: join(dir, 'search.txt'),
    /** Format 1: the whole session as one JSON file. */
    legacy: join(dir, 'session.json'),
  };
}
export type SessionPaths = ReturnType<typeof sessionPaths>;

const SNAP_RE = /^snap-(\d+)\.skr$/;
const LOG_RE = /^log-(\d+)\.skr$/;

/** The snapshot and log revisions named in a session folder listing. */
export function scanSessionDir(names: readonly string[]): {
  snapshots: number[];
  logs: number[];
  legacy: boolean;
} {
  const snapshots: number[] = [];
  const logs: number[] = [];
  let legacy = false;
  for (const name of names) {
    const s = SNAP_RE.exec(name);
    if (s) snapshots.push(Number(s[1]));
    const l = LOG_RE.exec(name);
    if (l) logs.push(Number(l[1]));
    if (name === 'session.json') legacy = true;
  }
  snapshots.sort((a, b) => a - b);
  logs.sort((a, b) => a - b);
  return { snapshots, logs, legacy };
}
