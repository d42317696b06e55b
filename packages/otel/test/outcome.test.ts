// How a failure is recorded: its code, never its message.
import { type ErrorCode, SessionKitError } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { classifyFailure } from '../src/index.js';

describe('classifyFailure', () => {
  it('a sessionkit error by its code and retryable flag', () => {
    expect(classifyFailure(new SessionKitError('conflict', 'session "a" changed'))).toEqual({
      type: 'conflict',
      retryable: false,
      exceptionType: 'SessionKitError',
    });
    expect(classifyFailure(new SessionKitError('unavailable', 'down')).retryable).toBe(true);
  });

  it('aborted: the code of a signal that fired, from the store or as a driver AbortError', () => {
    const fromStore = new SessionKitError('aborted', 'load "a" aborted');
    expect(classifyFailure(fromStore)).toEqual({
      type: 'aborted',
      retryable: false,
      exceptionType: 'SessionKitError',
    });
    const controller = new AbortController();
    controller.abort();
    expect(classifyFailure(controller.signal.reason).type).toBe('aborted');
    expect(classifyFailure(Object.assign(new Error('x'), { name: 'AbortError' })).type).toBe(
      'aborted',
    );
  });

  it('a code this copy of core does not list yet keeps its code (a newer adapter’s error)', () => {
    const newer = new SessionKitError('rate_limited' as ErrorCode, 'slow down', {});
    expect(classifyFailure(newer)).toEqual({
      type: 'rate_limited',
      retryable: false,
      exceptionType: 'SessionKitError',
    });
  });

  it('other errors by a class name that is an identifier, else _OTHER', () => {
    expect(classifyFailure(new TypeError('secret words'))).toEqual({
      type: 'TypeError',
      retryable: false,
      exceptionType: 'TypeError',
    });
    const renamed = Object.assign(new Error('x'), { name: 'my secret title' });
    for (const thrown of [renamed, 'a string', 42, null, undefined, { name: 7 }]) {
      expect(classifyFailure(thrown)).toEqual({
        type: '_OTHER',
        retryable: false,
        exceptionType: '_OTHER',
      });
    }
    // A look-alike whose code is not a code word is known by its name only.
    const fake = { name: 'SessionKitError', code: 'session text here', retryable: true };
    expect(classifyFailure(fake)).toEqual({
      type: 'SessionKitError',
      retryable: false,
      exceptionType: 'SessionKitError',
    });
  });
});
