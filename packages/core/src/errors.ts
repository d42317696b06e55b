/** Stable error codes. Branch on these, never on messages. */
export const ERROR_CODES = [
  'not_found',
  'exists',
  'conflict',
  'merge_diverged',
  'too_large',
  'invalid_argument',
  'corrupt',
  'unavailable',
  'closed',
  'aborted',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const BRAND = Symbol.for('sessionkit.error');

export interface SessionKitErrorOptions {
  /** The underlying driver or system error. Never carries credentials. */
  cause?: unknown;
  /** The session the error is about, when there is one. */
  sessionId?: string | undefined;
}

/**
 * The one error class every sessionkit package throws. `code` is stable; `message` names
 * the package and the session, e.g.
 * `[sessionkit/postgres] session "abc" changed since revision 7 — reload before retrying`.
 */
export class SessionKitError extends Error {
  override readonly name = 'SessionKitError';
  readonly code: ErrorCode;
  readonly sessionId: string | undefined;
  /** `true` for `unavailable`: the same call may succeed later. */
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: SessionKitErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.sessionId = options.sessionId;
    this.retryable = code === 'unavailable';
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * True when `e` is a sessionkit error (from any copy of this package: it checks a
 * registry-wide symbol and the `code`, not only `instanceof`), optionally of one code.
 */
export function isSessionKitError(e: unknown, code?: ErrorCode): e is SessionKitError {
  if (typeof e !== 'object' || e === null) return false;
  const candidate = e as { code?: unknown; name?: unknown; [BRAND]?: unknown };
  const branded = candidate[BRAND] === true || candidate.name === 'SessionKitError';
  if (!branded || typeof candidate.code !== 'string') return false;
  if (!(ERROR_CODES as readonly string[]).includes(candidate.code)) return false;
  return code === undefined || candidate.code === code;
}

/**
 * Builds errors whose messages carry the package prefix, e.g. `errorsFor('postgres')`
 * produces messages starting with `[sessionkit/postgres]`.
 */
export function errorsFor(adapter: string) {
  const prefix = `[sessionkit/${adapter}]`;
  const make = (code: ErrorCode, message: string, options?: SessionKitErrorOptions) =>
    new SessionKitError(code, `${prefix} ${message}`, options);
  return {
    prefix,
    make,
    notFound: (id: string) => make('not_found', `session "${id}" not found`, { sessionId: id }),
    exists: (id: string) => make('exists', `session "${id}" already exists`, { sessionId: id }),
    conflict: (id: string, expected: number | string, actual?: number | string) =>
      make(
        'conflict',
        `session "${id}" changed since revision ${expected}${actual === undefined ? '' : ` (now ${actual})`} — reload before retrying`,
        { sessionId: id },
      ),
    messageCountConflict: (id: string, expected: number, actual: number) =>
      make(
        'conflict',
        `session "${id}" has ${actual} messages, expected ${expected} — reload before retrying`,
        { sessionId: id },
      ),
    mergeDiverged: (childId: string, parentId: string, parentCount: number, at: number) =>
      make(
        'merge_diverged',
        `cannot merge "${childId}": parent "${parentId}" has ${parentCount} messages, more than the branch point ${at}`,
        { sessionId: childId },
      ),
    tooLarge: (id: string, what: string, bytes: number, max: number) =>
      make('too_large', `${what} of session "${id}" is ${bytes} bytes, over the limit of ${max}`, {
        sessionId: id,
      }),
    invalid: (message: string, sessionId?: string) =>
      make('invalid_argument', message, { sessionId }),
    corrupt: (id: string, detail: string, cause?: unknown) =>
      make('corrupt', `session "${id}" is corrupt: ${detail}`, { sessionId: id, cause }),
    unavailable: (detail: string, cause?: unknown) =>
      make('unavailable', `backend unavailable: ${detail} — safe to retry`, { cause }),
    closed: () => make('closed', 'the store is closed'),
    aborted: (operation: string, sessionId?: string) =>
      make(
        'aborted',
        `${operation}${sessionId === undefined ? '' : ` of session "${sessionId}"`} was aborted by its signal — nothing was written`,
        { sessionId },
      ),
  };
}

export type ErrorFactory = ReturnType<typeof errorsFor>;
