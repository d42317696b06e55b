import { describe, expect, it } from 'vitest';
import { ERROR_CODES, errorsFor, isSessionKitError, SessionKitError } from '../src/errors.js';

describe('SessionKitError', () => {
  it('carries code, sessionId, name and retryable', () => {
    const e = new SessionKitError('conflict', 'msg', { sessionId: 's1' });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('SessionKitError');
    expect(e.code).toBe('conflict');
    expect(e.sessionId).toBe('s1');
    expect(e.message).toBe('msg');
    expect(String(e)).toBe('SessionKitError: msg');
  });

  it('is retryable only for unavailable', () => {
    for (const code of ERROR_CODES) {
      expect(new SessionKitError(code, 'x').retryable, code).toBe(code === 'unavailable');
    }
  });

  it('keeps the cause, and has none when none is given', () => {
    const cause = new Error('ECONNREFUSED');
    const e = new SessionKitError('unavailable', 'down', { cause });
    expect(e.cause).toBe(cause);
    expect('cause' in new SessionKitError('closed', 'x')).toBe(false);
  });
});

describe('isSessionKitError', () => {
  it('matches with and without a code', () => {
    const e = new SessionKitError('not_found', 'x');
    expect(isSessionKitError(e)).toBe(true);
    expect(isSessionKitError(e, 'not_found')).toBe(true);
    expect(isSessionKitError(e, 'conflict')).toBe(false);
  });

  it('recognises errors from a duplicate copy of the package', () => {
    // Another copy of core defines its own class; it shares the registry-wide brand.
    const brand = Symbol.for('sessionkit.error');
    class OtherCopyError extends Error {
      readonly code = 'conflict';
      constructor() {
        super('from another copy');
        Object.defineProperty(this, brand, { value: true });
      }
    }
    const other = new OtherCopyError();
    expect(other instanceof SessionKitError).toBe(false);
    expect(isSessionKitError(other)).toBe(true);
    expect(isSessionKitError(other, 'conflict')).toBe(true);
    expect(isSessionKitError(other, 'exists')).toBe(false);

    // An older copy without the brand: recognised by name and code.
    const byName = Object.assign(new Error('x'), { name: 'SessionKitError', code: 'exists' });
    expect(isSessionKitError(byName, 'exists')).toBe(true);
    // A plain object that crossed a structured-clone boundary.
    expect(isSessionKitError({ name: 'SessionKitError', code: 'closed' }, 'closed')).toBe(true);
  });

  it('rejects foreign errors and values', () => {
    const nodeError = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    const lookalike = Object.assign(new Error('x'), { code: 'not_found' });
    const badCode = Object.assign(new Error('x'), { name: 'SessionKitError', code: 'EXPLODED' });
    const noCode = Object.assign(new Error('x'), { name: 'SessionKitError' });
    for (const v of [nodeError, lookalike, badCode, noCode, null, undefined, 'not_found', 42, {}]) {
      expect(isSessionKitError(v)).toBe(false);
      expect(isSessionKitError(v, 'not_found')).toBe(false);
    }
  });
});

describe('errorsFor', () => {
  const errors = errorsFor('postgres');

  it('prefixes every message with the package and names the session', () => {
    const cases: [SessionKitError, string, string][] = [
      [errors.notFound('abc'), 'not_found', '[sessionkit/postgres] session "abc" not found'],
      [errors.exists('abc'), 'exists', '[sessionkit/postgres] session "abc" already exists'],
      [
        errors.conflict('abc', 7),
        'conflict',
        '[sessionkit/postgres] session "abc" changed since revision 7 — reload before retrying',
      ],
      [
        errors.conflict('abc', 7, 9),
        'conflict',
        '[sessionkit/postgres] session "abc" changed since revision 7 (now 9) — reload before retrying',
      ],
      [
        errors.messageCountConflict('abc', 3, 5),
        'conflict',
        '[sessionkit/postgres] session "abc" has 5 messages, expected 3 — reload before retrying',
      ],
    ];
    for (const [e, code, message] of cases) {
      expect(e).toBeInstanceOf(SessionKitError);
      expect(e.code).toBe(code);
      expect(e.message).toBe(message);
      expect(e.sessionId).toBe('abc');
    }
    expect(errors.prefix).toBe('[sessionkit/postgres]');
  });

  it('builds every code with the prefix', () => {
    const cause = new Error('driver');
    const built = [
      errors.mergeDiverged('child', 'parent', 9, 4),
      errors.tooLarge('abc', 'runtime status', 3_000_000, 2_097_152),
      errors.invalid('bad limit', 'abc'),
      errors.corrupt('abc', 'bad checksum', cause),
      errors.unavailable('connection refused', cause),
      errors.closed(),
      errors.make('exists', 'custom'),
    ];
    expect(built.map((e) => e.code)).toEqual([
      'merge_diverged',
      'too_large',
      'invalid_argument',
      'corrupt',
      'unavailable',
      'closed',
      'exists',
    ]);
    for (const e of built) expect(e.message.startsWith('[sessionkit/postgres] ')).toBe(true);
    expect(built[0]!.message).toContain('"child"');
    expect(built[0]!.message).toContain('"parent"');
    expect(built[1]!.message).toContain('3000000');
    expect(built[3]!.cause).toBe(cause);
    expect(built[4]!.cause).toBe(cause);
    expect(built[4]!.retryable).toBe(true);
    expect(built[4]!.message).toContain('safe to retry');
    expect(built[2]!.sessionId).toBe('abc');
  });
});
