import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Store } from '../contracts.js';
import { isEventLog, isRuntimeStatusStore } from '../contracts.js';
import { errorsFor, isSessionKitError } from '../errors.js';
import { fsyncDir } from '../fs/atomic-write.js';
import { fsErrorToSessionKit } from '../fs/fs-errors.js';
import type { JsonValue, ListCursor, Message, Session, SessionInput } from '../types.js';
import { assertKnownKeys, MAX_LIST_LIMIT, prepareCreate } from '../validate.js';

const errors = errorsFor('core');

/** The `format` field of an export file's header line. */
export const EXPORT_FORMAT = 'sessionkit-export';
/** The export format version this package writes and reads. */
export const EXPORT_VERSION = 1;

/** Default page size of the export's listing walk. */
const EXPORT_PAGE_SIZE = 100;

/** Options of `exportSessions`. */
export interface ExportOptions {
  /** Only sessions of this workspace folder (`list`'s `folder` filter). Default: all. */
  folder?: string;
  /** Page size of each `list` call. Default 100 (at most 1000). */
  pageSize?: number;
}

/** What `exportSessions` did. */
export interface ExportResult {
  /** Sessions written to the file. */
  exported: number;
}

/** What `importSessions` does with a session whose id the target store already has. */
export type OnExisting = 'skip' | 'replace' | 'fail';

/** Options of `importSessions`. */
export interface ImportOptions {
  /** Default `'fail'`: the store's `exists` error propagates. */
  onExisting?: OnExisting;
}

/** What `importSessions` did. */
export interface ImportResult {
  /** Sessions created in the target store. */
  imported: number;
  /** Sessions left alone because the target had them (`onExisting: 'skip'`). */
  skipped: number;
}

/** One line of an export file after the header. Dates are ISO strings in the file. */
interface ExportRecord<M> {
  session: Session<M>;
  runtimeStatus?: JsonValue;
  events?: { sequence: number; revision: number; at: Date; type: string; payload: JsonValue }[];
}

/**
 * Writes every session of `store` (archived included, newest first) to `path` as JSON
 * Lines: a header `{"format":"sessionkit-export","version":1,"exportedAt":ISO}`, then one
 * line per session `{"session":{…},"runtimeStatus"?:…,"events"?:[…]}` with the full
 * session (messages, children, revision; dates as ISO strings), its runtime status when
 * the store is a `RuntimeStatusStore` and has one, and its events when the store is an
 * `EventLog` and the log is not empty.
 *
 * Streamed: the listing is walked in pages and one session is loaded at a time, so memory
 * holds one page of summaries and one session. The file is written to a temp file in the
 * same folder (mode 0600), fsync'd, renamed onto `path` and the folder fsync'd: readers
 * see the old file or the complete new one, never a part. On error the temp file is
 * removed and `path` is untouched.
 *
 * Not a point-in-time snapshot: each session appears at most once, but sessions written
 * while the export runs may be missing (an update moves a session ahead of the walk) and
 * sessions deleted meanwhile are skipped.
 *
 * Defaults: all folders, `pageSize` 100 (1–1000).
 *
 * Throws `invalid_argument` for a bad path or bad/unknown options and when the folder of
 * `path` cannot be written; `unavailable` for other file I/O failures; and whatever the
 * store throws, except `not_found` for a session that vanished during the export.
 */
export async function exportSessions<M = Message>(
  store: Store<M>,
  path: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  assertPath(path, 'exportSessions');
  assertKnownKeys(errors, options, ['folder', 'pageSize'], 'exportSessions');
  const pageSize = options.pageSize ?? EXPORT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_LIST_LIMIT) {
    throw errors.invalid(
      `exportSessions: pageSize must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${String(pageSize)}`,
    );
  }
  if (options.folder !== undefined && typeof options.folder !== 'string') {
    throw errors.invalid('exportSessions: folder must be a string');
  }
  const folder = options.folder;
  const target = resolve(path);
  const dir = dirname(target);
  const tmp = join(dir, `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const result: ExportResult = { exported: 0 };
  // Set when the store fails, so its error is not reported as a file failure.
  let storeError: unknown;

  async function* lines(): AsyncGenerator<string> {
    try {
      yield* records();
    } catch (e) {
      storeError = e;
      throw e;
    }
  }

  async function* records(): AsyncGenerator<string> {
    const header = { format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: new Date() };
    yield `${JSON.stringify(header)}\n`;
    let cursor: ListCursor | undefined;
    for (;;) {
      const page = await store.list({
        includeArchived: true,
        limit: pageSize,
        ...(folder === undefined ? {} : { folder }),
        ...(cursor === undefined ? {} : { startAfter: cursor }),
      });
      for (const summary of page) {
        const record = await readRecord(store, summary.id);
        if (record === undefined) continue;
        result.exported++;
        // JSON.stringify writes Dates as ISO strings with milliseconds.
        yield `${JSON.stringify(record)}\n`;
      }
      const last = page.at(-1);
      if (page.length < pageSize || last === undefined) return;
      cursor = { updatedAt: last.updatedAt, id: last.id };
    }
  }

  try {
    // Byte mode keeps the read-ahead to one line: a 20 MB transcript is not queued 16 deep.
    await pipeline(
      Readable.from(lines(), { objectMode: false }),
      createWriteStream(tmp, { flags: 'wx', mode: 0o600 }),
    );
    await fsyncFile(tmp);
    await rename(tmp, target);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    if (e === storeError) throw e;
    throw fsErrorToSessionKit(errors, e, `exportSessions: cannot write "${path}"`);
  }
  // The rename is durable only once the folder entry is on disk.
  await fsyncDir(dir).catch((e: unknown) => {
    throw fsErrorToSessionKit(errors, e, `exportSessions: cannot sync the folder of "${path}"`);
  });
  return result;
}

/** The export record of one session, or `undefined` when it vanished meanwhile. */
async function readRecord<M>(store: Store<M>, id: string): Promise<ExportRecord<M> | undefined> {
  try {
    const record: ExportRecord<M> = { session: await store.load(id) };
    if (isRuntimeStatusStore(store)) {
      const status = await store.loadRuntimeStatus(id);
      if (status !== null) record.runtimeStatus = status;
    }
    if (isEventLog(store)) {
      const events = await store.events(id);
      if (events.length > 0) record.events = events;
    }
    return record;
  } catch (e) {
    if (isSessionKitError(e, 'not_found')) return undefined;
    throw e;
  }
}

/**
 * Creates in `store` every session of an export file written by `exportSessions`,
 * keeping ids, dates (`createdAt`, `updatedAt`, `archivedAt`), `parentId`,
 * `branchedAtTurn` and every other field; `children` and `revision` are derived by the
 * target (revision 1). Runtime status is restored when the target is a
 * `RuntimeStatusStore` and events are re-appended in order when it is an `EventLog`
 * (new `at` and `revision`; sequences restart at 1); otherwise they are dropped.
 *
 * Streamed: the file is read line by line, never whole. It is checked entirely (header,
 * JSON, record shape, dates, session fields) before the first write, so a corrupt file
 * imports nothing. Sessions are created in file order; a failure from the store part-way
 * leaves the sessions before it imported.
 *
 * `onExisting` (default `'fail'`): `'fail'` lets the store's `exists` error propagate;
 * `'skip'` leaves the stored session alone and counts it in `skipped`; `'replace'`
 * deletes the stored session (with its status and events; the store promotes its
 * children to its parent, as `Store.delete` does) and creates the imported one.
 *
 * Throws `corrupt` naming the line for a missing or unknown header, an unsupported
 * `version`, a line that is not JSON or not a valid session record; `invalid_argument`
 * for a bad path or bad/unknown options and when `path` cannot be read; `unavailable`
 * for other read failures; `exists` (with `'fail'`) and whatever the store throws.
 */
export async function importSessions<M = Message>(
  store: Store<M>,
  path: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  assertPath(path, 'importSessions');
  assertKnownKeys(errors, options, ['onExisting'], 'importSessions');
  const onExisting = options.onExisting ?? 'fail';
  if (!['skip', 'replace', 'fail'].includes(onExisting)) {
    throw errors.invalid(
      `importSessions: onExisting must be "skip", "replace" or "fail", got ${JSON.stringify(onExisting)}`,
    );
  }
  // First pass: validation only, so a bad line cannot leave a half-imported store.
  await forEachRecord<M>(path, async () => undefined);

  const result: ImportResult = { imported: 0, skipped: 0 };
  await forEachRecord<M>(path, async ({ input, runtimeStatus, events }) => {
    try {
      await store.create(input);
    } catch (e) {
      if (!isSessionKitError(e, 'exists') || onExisting === 'fail') throw e;
      if (onExisting === 'skip') {
        result.skipped++;
        return;
      }
      await store.delete(input.id).catch((err: unknown) => {
        if (!isSessionKitError(err, 'not_found')) throw err;
      });
      await store.create(input);
    }
    if (runtimeStatus !== undefined && isRuntimeStatusStore(store)) {
      await store.saveRuntimeStatus(input.id, runtimeStatus);
    }
    if (events !== undefined && isEventLog(store)) {
      for (const event of events) await store.append(input.id, event.type, event.payload);
    }
    result.imported++;
  });
  return result;
}

/** A parsed, validated export line, ready for `create`. */
interface ImportRecord<M> {
  input: SessionInput<M>;
  runtimeStatus: JsonValue | undefined;
  events: { type: string; payload: JsonValue }[] | undefined;
}

/**
 * Reads `path` line by line, checks the header and calls `visit` with each session
 * record in order. Throws `corrupt` naming the first bad line.
 */
async function forEachRecord<M>(
  path: string,
  visit: (record: ImportRecord<M>) => Promise<void>,
): Promise<void> {
  let handle: FileHandle;
  try {
    // Opened first so a missing or unreadable file fails here, not inside the stream.
    handle = await open(path, 'r');
  } catch (e) {
    throw fsErrorToSessionKit(errors, e, `importSessions: cannot read "${path}"`);
  }
  const input = handle.createReadStream({ encoding: 'utf8' });
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNo = 0;
  let sawHeader = false;
  try {
    for await (const line of reader) {
      lineNo++;
      if (line.trim() === '') continue;
      if (!sawHeader) {
        checkHeader(path, lineNo, line);
        sawHeader = true;
        continue;
      }
      await visit(parseRecord<M>(path, lineNo, line));
    }
  } catch (e) {
    throw fsErrorToSessionKit(errors, e, `importSessions: cannot read "${path}"`);
  } finally {
    reader.close();
    input.destroy();
  }
  if (!sawHeader) throw corrupt(path, 1, 'missing the sessionkit-export header');
}

function corrupt(path: string, lineNo: number, detail: string, cause?: unknown) {
  return errors.make('corrupt', `importSessions: "${path}" line ${lineNo}: ${detail}`, { cause });
}

function parseJson(path: string, lineNo: number, line: string): unknown {
  try {
    return JSON.parse(line);
  } catch (e) {
    throw corrupt(path, lineNo, 'not valid JSON', e);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkHeader(path: string, lineNo: number, line: string): void {
  const header = parseJson(path, lineNo, line);
  if (!isObject(header) || header.format !== EXPORT_FORMAT) {
    throw corrupt(path, lineNo, `not a ${EXPORT_FORMAT} file (missing header)`);
  }
  if (header.version !== EXPORT_VERSION) {
    throw corrupt(
      path,
      lineNo,
      `unsupported export version ${JSON.stringify(header.version)} (this version reads ${EXPORT_VERSION})`,
    );
  }
}

const RECORD_KEYS = ['session', 'runtimeStatus', 'events'];
const DATE_FIELDS = ['createdAt', 'updatedAt', 'archivedAt'] as const;

function parseRecord<M>(path: string, lineNo: number, line: string): ImportRecord<M> {
  const record = parseJson(path, lineNo, line);
  if (!isObject(record) || !isObject(record.session)) {
    throw corrupt(path, lineNo, 'expected {"session": {…}}');
  }
  const unknown = Object.keys(record).find((k) => !RECORD_KEYS.includes(k));
  if (unknown !== undefined) throw corrupt(path, lineNo, `unknown field "${unknown}"`);
  // Derived by the target store: never written by callers.
  const { children: _c, revision: _r, messageCount: _m, ...fields } = record.session;
  for (const key of DATE_FIELDS) {
    const value = fields[key];
    if (value === undefined) continue;
    const date = typeof value === 'string' ? new Date(value) : undefined;
    if (date === undefined || Number.isNaN(date.getTime())) {
      throw corrupt(path, lineNo, `session.${key} is not an ISO date`);
    }
    fields[key] = date;
  }
  const input = fields as unknown as SessionInput<M>;
  try {
    // The checks every store's create makes, before any write.
    prepareCreate(errors, input);
  } catch (e) {
    if (!isSessionKitError(e, 'invalid_argument')) throw e;
    throw corrupt(path, lineNo, `invalid session: ${e.message}`, e);
  }
  let events: ImportRecord<M>['events'];
  if (record.events !== undefined) {
    if (!Array.isArray(record.events)) throw corrupt(path, lineNo, 'events must be an array');
    events = record.events.map((event, i) => {
      if (!isObject(event) || typeof event.type !== 'string' || event.type === '') {
        throw corrupt(path, lineNo, `events[${i}] needs a non-empty "type"`);
      }
      return { type: event.type, payload: (event.payload ?? null) as JsonValue };
    });
  }
  return { input, runtimeStatus: record.runtimeStatus as JsonValue | undefined, events };
}

function assertPath(path: unknown, where: string): asserts path is string {
  if (typeof path !== 'string' || path === '' || path.includes('\u0000')) {
    throw errors.invalid(`${where}: path must be a non-empty string`);
  }
}

/** fsyncs a file through a fresh descriptor (fsync applies to the inode). */
async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
