import { createWriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Store } from '../contracts.js';
import { isEventLog, isRuntimeStatusStore } from '../contracts.js';
import { errorsFor, isSessionKitError } from '../errors.js';
import { fsyncDir, tempPathFor } from '../fs/atomic-write.js';
import { fsErrorToSessionKit } from '../fs/fs-errors.js';
import { prepareCreate } from '../input/create-input.js';
import { assertJsonValue, jsonByteLength } from '../json-value.js';
import type { JsonValue, Message, Session, SessionInput } from '../types.js';
import { assertEventType, assertKnownKeys, MAX_RUNTIME_STATUS_BYTES } from '../validate.js';
import { assertPageSize, listPages } from './paging.js';
import {
  assertProgressOptions,
  PROGRESS_OPTION_KEYS,
  type ProgressOptions,
  stopIfAborted,
} from './progress.js';

const errors = errorsFor('core');

/** The `format` field of an export file's header line. */
export const EXPORT_FORMAT = 'sessionkit-export';
/** The export format version this package writes and reads. */
export const EXPORT_VERSION = 1;

/** Default page size of the export's listing walk. */
const EXPORT_PAGE_SIZE = 100;

/** Options of `exportSessions`. */
export interface ExportOptions extends ProgressOptions {
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
export interface ImportOptions extends ProgressOptions {
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
 * Streamed: the listing is walked in pages (keyset paging) and one session is loaded at a
 * time, so memory holds one page of summaries and one session. The file is written to a
 * temp file `.<name>.<random>.tmp` in the same folder (mode 0600), fsync'd, renamed onto
 * `path` and the folder fsync'd: readers see the old file or the complete new one, never
 * a part. On a failure before the rename (the store, writing, syncing the temp file, the
 * rename itself) the temp file is removed and `path` is untouched. The one failure after
 * the rename is syncing the folder: `path` then already holds the complete new export,
 * but the rename may not survive a power loss, and the error is still thrown.
 *
 * Not a point-in-time snapshot: each session appears at most once, but sessions written
 * while the export runs may be missing (an update moves a session ahead of the walk) and
 * sessions deleted meanwhile are skipped.
 *
 * Defaults: all folders, `pageSize` 100 (1–1000). `onProgress` is called after each
 * session written (`{phase: "export", done}`); `signal` stops the export before its next
 * session: the temp file is removed, `path` is untouched, and the call rejects with
 * `signal.reason`.
 *
 * Throws `invalid_argument` for a bad path or bad/unknown options and when the folder of
 * `path` cannot be written; `unavailable` for other file I/O failures (including the
 * folder sync after the rename, see above); `corrupt` when the store's listing breaks its
 * own keyset order (a cursor that does not advance would otherwise loop forever); and
 * whatever the store throws, except `not_found` for a session that vanished during the
 * export.
 */
export async function exportSessions<M = Message>(
  store: Store<M>,
  path: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  assertPath(path, 'exportSessions');
  assertKnownKeys(
    errors,
    options,
    ['folder', 'pageSize', ...PROGRESS_OPTION_KEYS],
    'exportSessions',
  );
  assertProgressOptions('exportSessions', options);
  const pageSize = options.pageSize ?? EXPORT_PAGE_SIZE;
  assertPageSize(pageSize, 'exportSessions');
  if (options.folder !== undefined && typeof options.folder !== 'string') {
    throw errors.invalid('exportSessions: folder must be a string');
  }
  const folder = options.folder;
  const target = resolve(path);
  const dir = dirname(target);
  const tmp = tempPathFor(target);
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
    for await (const page of listPages(store, { pageSize, where: 'exportSessions', folder })) {
      for (const summary of page) {
        stopIfAborted(options);
        const record = await readRecord(store, summary.id);
        if (record === undefined) continue;
        result.exported++;
        // JSON.stringify writes Dates as ISO strings with milliseconds.
        yield `${JSON.stringify(record)}\n`;
        options.onProgress?.({ phase: 'export', done: result.exported });
      }
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
 * Checked first, imported second: the file is read twice, line by line, never whole. The
 * first pass writes nothing and checks everything the writes would check: the header,
 * each line's JSON and record shape, dates, session fields (as `create` does), the
 * runtime status (JSON, at most `MAX_RUNTIME_STATUS_BYTES` as UTF-8 JSON), each event's
 * type (1–1024 chars, as `append` does) and payload, and that no session id appears
 * twice. So a bad file imports nothing. The duplicate check keeps every id of the file in
 * memory during that pass, so that pass's memory grows with the number of sessions
 * (about 100 bytes per 26-char id, up to about 250 for a 128-char one: some 100 MB per
 * million sessions); everything else is held one line at a time. The file must
 * not change between the passes (the second pass re-checks each line and stops at the
 * first bad one). Sessions are then created in file order; a failure from the store
 * part-way leaves the sessions before it imported.
 *
 * `onProgress` is called after each line checked (`{phase: "check", done}`) and each
 * session imported or skipped (`{phase: "import", done, total}`). `signal` stops the
 * import between two sessions (never inside one: a session is created with its status and
 * events before the next check) and the call rejects with `signal.reason`; the sessions
 * before it stay imported, and a second run with `onExisting: 'skip'` finishes the job
 * without duplicates.
 *
 * `onExisting` (default `'fail'`) decides what happens when the target already has an id:
 * - `'fail'`: the store's `exists` error propagates (sessions before it stay imported);
 * - `'skip'`: the stored session is left alone and counted in `skipped`;
 * - `'replace'`: the stored session is deleted with `Store.delete`, then the imported one
 *   is created. This is two writes, not one atomic step, and the delete is a real delete:
 *   - it removes the stored session's messages, runtime status, events and router
 *     bindings; the imported record brings its own status and events, not the old ones;
 *   - it promotes the stored session's children to its parent (their `parentId` becomes
 *     the grandparent's id, or none), and nothing re-attaches them: the imported session
 *     only gets as children the sessions created under it later in this import. A child
 *     that the file holds too but lists *before* its parent (the export is newest first,
 *     and a branch is usually newer than its parent) is re-created under the old parent
 *     and then promoted when that parent is replaced, so it ends up detached as well;
 *   - if the create fails after the delete (the backend goes away, a concurrent writer
 *     creates the id meanwhile), the stored session is already gone and the imported one
 *     is not there: both versions are lost from the store (the file still holds the
 *     imported one). That failure is thrown as an error naming the session, with the
 *     store's error as `cause` and its code (`unavailable` for a non-sessionkit error),
 *     so re-running the import restores it.
 *   A concurrent writer's change between the delete and the create is not detected.
 *
 * Throws `corrupt` naming the line for a missing or unknown header, an unsupported
 * `version`, a line that is not JSON or not a valid session record (bad field, oversized
 * runtime status, bad event type or payload, an id already seen on an earlier line);
 * `invalid_argument` for a bad path or bad/unknown options and when `path` cannot be
 * read; `unavailable` for other read failures; `exists` (with `'fail'`) and whatever the
 * store throws.
 */
export async function importSessions<M = Message>(
  store: Store<M>,
  path: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  assertPath(path, 'importSessions');
  assertKnownKeys(errors, options, ['onExisting', ...PROGRESS_OPTION_KEYS], 'importSessions');
  assertProgressOptions('importSessions', options);
  const onExisting = options.onExisting ?? 'fail';
  if (!['skip', 'replace', 'fail'].includes(onExisting)) {
    throw errors.invalid(
      `importSessions: onExisting must be "skip", "replace" or "fail", got ${JSON.stringify(onExisting)}`,
    );
  }
  // First pass: validation only, so a bad line cannot leave a half-imported store.
  // id → the line it was first seen on (the only state that grows with the file).
  const seen = new Map<string, number>();
  await forEachRecord<M>(path, async ({ input }, lineNo) => {
    stopIfAborted(options);
    const first = seen.get(input.id);
    if (first !== undefined) {
      throw corrupt(path, lineNo, `duplicate session id "${input.id}" (first on line ${first})`);
    }
    seen.set(input.id, lineNo);
    options.onProgress?.({ phase: 'check', done: seen.size });
  });
  const total = seen.size;
  seen.clear();

  const result: ImportResult = { imported: 0, skipped: 0 };
  const report = () =>
    options.onProgress?.({ phase: 'import', done: result.imported + result.skipped, total });
  await forEachRecord<M>(path, async ({ input, runtimeStatus, events }) => {
    stopIfAborted(options);
    try {
      await store.create(input);
    } catch (e) {
      if (!isSessionKitError(e, 'exists') || onExisting === 'fail') throw e;
      if (onExisting === 'skip') {
        result.skipped++;
        report();
        return;
      }
      await store.delete(input.id).catch((err: unknown) => {
        if (!isSessionKitError(err, 'not_found')) throw err;
      });
      try {
        await store.create(input);
      } catch (err) {
        throw replaceFailed(input.id, err);
      }
    }
    if (runtimeStatus !== undefined && isRuntimeStatusStore(store)) {
      await store.saveRuntimeStatus(input.id, runtimeStatus);
    }
    if (events !== undefined && isEventLog(store)) {
      for (const event of events) await store.append(input.id, event.type, event.payload);
    }
    result.imported++;
    report();
  });
  return result;
}

/** The error of a `'replace'` whose create failed after its delete. */
function replaceFailed(id: string, cause: unknown) {
  const code = isSessionKitError(cause) ? cause.code : 'unavailable';
  const why = isSessionKitError(cause) ? cause.message : 'see cause';
  return errors.make(
    code,
    `importSessions: replacing session "${id}": the stored session was deleted but creating the imported one failed, so the store holds neither (run the import again) — ${why}`,
    { cause, sessionId: id },
  );
}

/** A parsed, validated export line, ready for `create`. */
interface ImportRecord<M> {
  input: SessionInput<M>;
  runtimeStatus: JsonValue | undefined;
  events: { type: string; payload: JsonValue }[] | undefined;
}

/**
 * Reads `path` line by line, checks the header and calls `visit` with each session
 * record (validated) and its line number, in order. Throws `corrupt` naming the first
 * bad line.
 */
async function forEachRecord<M>(
  path: string,
  visit: (record: ImportRecord<M>, lineNo: number) => Promise<void>,
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
      await visit(parseRecord<M>(path, lineNo, line), lineNo);
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
  // The checks every store's create makes, before any write.
  asCorrupt(path, lineNo, 'invalid session', () => prepareCreate(errors, input));
  let runtimeStatus: JsonValue | undefined;
  if (record.runtimeStatus !== undefined) {
    const status = record.runtimeStatus;
    // The checks of saveRuntimeStatus: JSON, and at most MAX_RUNTIME_STATUS_BYTES.
    asCorrupt(path, lineNo, 'invalid runtimeStatus', () =>
      assertJsonValue(errors, status, 'runtime status'),
    );
    const bytes = jsonByteLength(status as JsonValue);
    if (bytes > MAX_RUNTIME_STATUS_BYTES) {
      throw corrupt(
        path,
        lineNo,
        `runtimeStatus is ${bytes} bytes, over the limit of ${MAX_RUNTIME_STATUS_BYTES}`,
      );
    }
    runtimeStatus = status as JsonValue;
  }
  let events: ImportRecord<M>['events'];
  if (record.events !== undefined) {
    if (!Array.isArray(record.events)) throw corrupt(path, lineNo, 'events must be an array');
    events = record.events.map((event: unknown, i) => {
      if (!isObject(event) || event.type === undefined) {
        throw corrupt(path, lineNo, `events[${i}] needs a non-empty "type"`);
      }
      const { type } = event;
      const payload = event.payload ?? null;
      // The checks of EventLog.append.
      asCorrupt(path, lineNo, `invalid events[${i}]`, () => {
        assertEventType(errors, type);
        assertJsonValue(errors, payload, 'event payload');
      });
      return { type: type as string, payload: payload as JsonValue };
    });
  }
  return { input, runtimeStatus, events };
}

/** Runs `check`; an `invalid_argument` it throws becomes `corrupt` naming the line. */
function asCorrupt(path: string, lineNo: number, what: string, check: () => void): void {
  try {
    check();
  } catch (e) {
    if (!isSessionKitError(e, 'invalid_argument')) throw e;
    // The line is named by `corrupt`; the inner prefix would repeat `[sessionkit/core]`.
    throw corrupt(path, lineNo, `${what}: ${e.message.replace(/^\[sessionkit\/[^\]]*\] /, '')}`, e);
  }
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
