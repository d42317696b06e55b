import { promises as fsp } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, posix, win32 } from 'node:path';
import { errorsFor, isSessionKitError } from '../errors.js';
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic-write.js';
import { type FileLockOptions, withFileLock } from '../fs/file-lock.js';
import { newSessionId } from '../ids.js';

const errors = errorsFor('core');

/** Format version written in the stash file. */
export const STASH_FORMAT_VERSION = 1;

/** One saved draft prompt. */
export interface StashEntry {
  id: string;
  text: string;
  savedAt: Date;
}

/** Options of `StashStore`. */
export interface StashStoreOptions {
  /** Options of the cross-process lock taken around every change. */
  lock?: FileLockOptions;
}

/** Where `defaultStashPath` looks; every field defaults to this process's value. */
export interface StashPathOptions {
  /** As `process.platform` (`"linux"`, `"darwin"`, `"win32"` …). */
  platform?: string;
  env?: Record<string, string | undefined>;
  homedir?: string;
}

/**
 * The platform's conventional place for the stash:
 * - Linux and other Unixes: `$XDG_DATA_HOME/sessionkit/stash.json`, where an unset or
 *   relative `XDG_DATA_HOME` means `~/.local/share` (as the XDG spec says);
 * - macOS: `~/Library/Application Support/sessionkit/stash.json`;
 * - Windows: `%APPDATA%\sessionkit\stash.json` (`~\AppData\Roaming` when unset).
 * Pure: creates nothing.
 */
export function defaultStashPath(options: StashPathOptions = {}): string {
  const platform = options.platform ?? process.platform;
  const env = options.env ?? process.env;
  const home = options.homedir ?? homedir();
  if (platform === 'win32') {
    const appData = env.APPDATA || win32.join(home, 'AppData', 'Roaming');
    return win32.join(appData, 'sessionkit', 'stash.json');
  }
  if (platform === 'darwin') {
    return posix.join(home, 'Library', 'Application Support', 'sessionkit', 'stash.json');
  }
  const xdg = env.XDG_DATA_HOME;
  const dataHome = xdg && posix.isAbsolute(xdg) ? xdg : posix.join(home, '.local', 'share');
  return posix.join(dataHome, 'sessionkit', 'stash.json');
}

interface StashFile {
  version: number;
  entries: { id: string; text: string; savedAt: string }[];
}

/**
 * Draft prompts kept in one JSON file, newest first, so a user can park a half-written
 * message and restore it later.
 *
 * Safe for several processes: every change happens under a lock file (`<path>.lock`),
 * re-reads the file inside the lock and replaces it with `writeFileAtomic`, so concurrent
 * saves from two processes all survive and readers never see a torn file. The file is
 * created `0600`; folders the stash has to create are made `0700`, while a folder that
 * already exists keeps its mode (see `ensurePrivateDir`). A file that cannot be parsed is
 * reported as `corrupt` and left untouched, never silently reset. The older bare-array
 * format (`[{id, text, saved_at}]`) is read too and rewritten in the current format on the
 * next change.
 */
export class StashStore {
  /** The stash file. */
  readonly path: string;
  /** The lock file guarding changes. */
  readonly lockPath: string;
  readonly #lock: FileLockOptions;

  /**
   * A stash at `path` (see `defaultStashPath`). Creates nothing yet: missing folders are
   * created (`0700`) on the first change, and an existing folder is never chmodded. Use
   * `StashStore.open` to create them right away.
   * Throws `invalid_argument` for an empty path.
   */
  constructor(path: string, options: StashStoreOptions = {}) {
    if (typeof path !== 'string' || path === '') {
      throw errors.invalid('StashStore: path must be a non-empty string');
    }
    this.path = path;
    this.lockPath = `${path}.lock`;
    this.#lock = options.lock ?? {};
  }

  /**
   * Opens the stash at `path` (default `defaultStashPath()`), creating its folder and any
   * missing parents with mode `0700`; folders that already exist keep their mode.
   * Throws `unavailable` when the folder cannot be created.
   */
  static async open(
    path: string = defaultStashPath(),
    options: StashStoreOptions = {},
  ): Promise<StashStore> {
    const store = new StashStore(path, options);
    await store.#ensureDir();
    return store;
  }

  /**
   * Saves `text` as the newest entry and returns its id (time-sortable, unique).
   * Throws `invalid_argument` unless `text` is a string, `corrupt` when the stash file is
   * unreadable (nothing is written then), `unavailable` on I/O errors or lock timeout.
   */
  async save(text: string): Promise<string> {
    if (typeof text !== 'string') throw errors.invalid('stash: text must be a string');
    return this.#change((entries) => {
      const id = newSessionId();
      entries.unshift({ id, text, savedAt: new Date() });
      return id;
    });
  }

  /** The text of entry `id`. Throws `not_found`, `corrupt`, `unavailable`. */
  async get(id: string): Promise<string> {
    assertEntryId(id);
    const entry = (await this.#read()).find((e) => e.id === id);
    if (!entry) {
      throw errors.make('not_found', `stash entry "${id}" not found in ${this.path}`);
    }
    return entry.text;
  }

  /**
   * Every entry, newest first (by `savedAt`, ties in file order). A missing file is an
   * empty stash. Throws `corrupt`, `unavailable`.
   */
  async list(): Promise<StashEntry[]> {
    const entries = await this.#read();
    return entries
      .map((e, i) => ({ e, i }))
      .sort((a, b) => b.e.savedAt.getTime() - a.e.savedAt.getTime() || a.i - b.i)
      .map(({ e }) => e);
  }

  /**
   * Removes entry `id`; a missing entry (or missing file) is not an error.
   * Throws `corrupt`, `unavailable`.
   */
  async delete(id: string): Promise<void> {
    assertEntryId(id);
    if (!(await this.#exists())) return;
    await this.#change(
      (entries) => {
        const i = entries.findIndex((e) => e.id === id);
        if (i < 0) return false;
        entries.splice(i, 1);
        return true;
      },
      (changed) => changed,
    );
  }

  // Not cached: the folder may have been removed since the last change.
  async #ensureDir(): Promise<void> {
    try {
      await ensurePrivateDir(dirname(this.path));
    } catch (cause) {
      throw this.#ioError('cannot create the stash folder', cause);
    }
  }

  async #exists(): Promise<boolean> {
    try {
      await fsp.stat(this.path);
      return true;
    } catch (e) {
      if ((e as { code?: unknown }).code === 'ENOENT') return false;
      throw this.#ioError('cannot read the stash', e);
    }
  }

  // Read-modify-write under the lock; `write` decides from the result whether to write.
  async #change<T>(
    mutate: (entries: StashEntry[]) => T,
    write: (result: T) => boolean = () => true,
  ): Promise<T> {
    await this.#ensureDir();
    try {
      return await withFileLock(
        this.lockPath,
        async () => {
          const entries = await this.#read();
          const result = mutate(entries);
          if (write(result)) await this.#write(entries);
          return result;
        },
        this.#lock,
      );
    } catch (e) {
      if (isSessionKitError(e)) throw e;
      throw this.#ioError('cannot update the stash', e);
    }
  }

  async #read(): Promise<StashEntry[]> {
    let raw: string;
    try {
      raw = await fsp.readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as { code?: unknown }).code === 'ENOENT') return [];
      throw this.#ioError('cannot read the stash', e);
    }
    if (raw.trim() === '') return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (cause) {
      throw this.#corrupt('not valid JSON', cause);
    }
    return this.#decode(parsed);
  }

  #decode(parsed: unknown): StashEntry[] {
    let items: unknown[];
    if (Array.isArray(parsed)) {
      items = parsed; // the original bare-array format
    } else if (typeof parsed === 'object' && parsed !== null) {
      const file = parsed as Partial<StashFile>;
      if (file.version !== STASH_FORMAT_VERSION) {
        throw this.#corrupt(
          typeof file.version === 'number' && file.version > STASH_FORMAT_VERSION
            ? `format version ${file.version} is newer than this sessionkit understands (${STASH_FORMAT_VERSION}); upgrade`
            : `unknown format version ${String(file.version)}`,
        );
      }
      if (!Array.isArray(file.entries)) throw this.#corrupt('"entries" is not an array');
      items = file.entries;
    } else {
      throw this.#corrupt('expected a JSON object');
    }
    return items.map((item, i) => {
      const e = item as { id?: unknown; text?: unknown; savedAt?: unknown; saved_at?: unknown };
      if (typeof item !== 'object' || item === null)
        throw this.#corrupt(`entry ${i} is not an object`);
      if (typeof e.id !== 'string' || e.id === '') throw this.#corrupt(`entry ${i} has no id`);
      if (typeof e.text !== 'string') throw this.#corrupt(`entry ${i} has no text`);
      const when = e.savedAt ?? e.saved_at;
      const savedAt = typeof when === 'string' ? new Date(when) : undefined;
      if (!savedAt || Number.isNaN(savedAt.getTime()))
        throw this.#corrupt(`entry ${i} has no valid savedAt`);
      return { id: e.id, text: e.text, savedAt };
    });
  }

  async #write(entries: StashEntry[]): Promise<void> {
    const file: StashFile = {
      version: STASH_FORMAT_VERSION,
      entries: entries.map((e) => ({ id: e.id, text: e.text, savedAt: e.savedAt.toISOString() })),
    };
    await writeFileAtomic(this.path, `${JSON.stringify(file, null, 2)}\n`);
  }

  #corrupt(detail: string, cause?: unknown) {
    return errors.make(
      'corrupt',
      `stash file ${this.path} is corrupt: ${detail} — fix or move it away; it was left untouched`,
      { cause },
    );
  }

  #ioError(what: string, cause: unknown) {
    const code = (cause as { code?: unknown } | null)?.code;
    return errors.unavailable(
      `${what} at ${this.path}${typeof code === 'string' ? ` (${code})` : ''}`,
      cause,
    );
  }
}

function assertEntryId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '') {
    throw errors.invalid('stash: id must be a non-empty string');
  }
}
