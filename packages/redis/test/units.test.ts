// Pure parts: URL parsing, error mapping, the stored header format, the key layout.

import { EventEmitter } from 'node:events';
import { isSessionKitError } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { CallLost, CallWatch } from '../src/calls.js';
import { decodeHeader, decodeMessages, encodeHeader } from '../src/codec.js';
import { parseRedisUrl } from '../src/connection.js';
import { wrapRedisError } from '../src/errors.js';
import { KeySpace } from '../src/keys.js';

function replyError(message: string): Error {
  const e = new Error(message);
  e.name = 'ReplyError';
  return e;
}

describe('redis › URLs', () => {
  it('reads host, port, credentials, database, TLS and the store options', () => {
    const { options, settings } = parseRedisUrl(
      new URL('rediss://u%40x:p%3Ass@example.com:6380/3?prefix=app:&ttl=60'),
    );
    expect(options).toEqual({
      host: 'example.com',
      port: 6380,
      username: 'u@x',
      password: 'p:ss',
      db: 3,
      tls: {},
    });
    expect(settings).toEqual({ prefix: 'app:', ttlSeconds: 60, cluster: false });
    expect(parseRedisUrl(new URL('redis://h?cluster=true')).settings.cluster).toBe(true);
  });

  it('rejects unknown parameters (naming them) and bad values, never echoing the password', () => {
    for (const [url, pattern] of [
      ['redis://h?skUnknown=1', /skUnknown/],
      ['redis://h?ttl=1.5', /ttl/],
      ['redis://h/x', /database/],
      ['redis://h/2?cluster=true', /Cluster/],
      ['redis://h?cluster=yes', /cluster/],
    ] as const) {
      let error: unknown;
      try {
        parseRedisUrl(new URL(url.replace('//h', '//user:hunter2@h')));
      } catch (e) {
        error = e;
      }
      expect(isSessionKitError(error, 'invalid_argument'), url).toBe(true);
      expect((error as Error).message).toMatch(pattern);
      expect((error as Error).message).not.toContain('hunter2');
    }
  });
});

describe('redis › driver errors', () => {
  it('maps outages to unavailable (retryable), auth to invalid_argument, anything else to corrupt', () => {
    const unavailable = [
      new Error('Connection is closed.'),
      replyError('CLUSTERDOWN The cluster is down'),
      replyError('LOADING'),
    ];
    for (const e of unavailable) {
      const wrapped = wrapRedisError(e, 'x');
      expect(wrapped.code, e.message).toBe('unavailable');
      expect(wrapped.retryable).toBe(true);
      expect(wrapped.cause).toBe(e);
    }
    expect(wrapRedisError(replyError('WRONGPASS invalid username-password pair'), 'x').code).toBe(
      'invalid_argument',
    );
    expect(wrapRedisError(replyError('WRONGTYPE Operation against a key'), 'x').code).toBe(
      'corrupt',
    );
  });
});

describe('redis › stored format', () => {
  const header = {
    id: 'a',
    title: 't',
    folder: 'f',
    createdAt: new Date(-62_135_596_800_000),
    updatedAt: new Date(253_402_300_799_999),
    model: '',
    provider: '',
    tokenCount: 1,
    costUsd: 0.5,
    turnCount: 2,
    metadata: JSON.parse('{"__proto__":"x"}') as Record<string, string>,
    status: 'active',
    revision: 3,
    archivedAt: new Date(5),
    state: { deep: [1, { k: null }] },
  };

  it('round-trips a header, dates at millisecond precision', () => {
    expect(decodeHeader('a', encodeHeader(header))).toEqual(header);
  });

  it('reads damage as corrupt, naming the session', () => {
    for (const text of [
      '{',
      '[]',
      JSON.stringify({ v: 2 }),
      encodeHeader({ ...header, id: 'b' }),
      undefined,
    ]) {
      let error: unknown;
      try {
        decodeHeader('a', text);
      } catch (e) {
        error = e;
      }
      expect(isSessionKitError(error, 'corrupt'), String(text)).toBe(true);
      expect((error as Error).message).toContain('"a"');
    }
    expect(() => decodeMessages('a', ['1,2'])).toThrow(/corrupt|JSON value/);
    expect(decodeMessages('a', ['{"x":1}', '"s"'])).toEqual([{ x: 1 }, 's']);
  });
});

describe('redis › key layout', () => {
  it('gives every key of a session the tag {id} and cross-session keys tags no id can have', () => {
    const k = new KeySpace('p:');
    expect(Object.values(k.session('a.b')).every((key) => key.startsWith('p:{a.b}:'))).toBe(true);
    expect(k.order).toBe('p:{~ix}:order');
    expect(k.bindings).toBe('p:{~rt}:b');
    expect(k.idOfMetaKey('p:{a.b}:m')).toBe('a.b');
    expect(k.idOfMetaKey('p:{~ix}:m')).toBeUndefined();
    expect(k.idOfMetaKey('q:{a}:m')).toBeUndefined();
  });
});

describe('redis › calls that are never answered', () => {
  const never = () => new Promise<never>(() => {});
  // A standalone client as the watch sees it: an emitter of 'close' that is no Cluster.
  const fakeClient = () =>
    new EventEmitter() as unknown as ConstructorParameters<typeof CallWatch>[0];

  it('a call pending when the connection closes is lost; a later one is not', async () => {
    const client = fakeClient();
    const watch = new CallWatch(client);
    const pending = watch.track(never());
    (client as unknown as EventEmitter).emit('close');
    await expect(pending).rejects.toBeInstanceOf(CallLost);
    expect(watch.pending).toBe(0);
    await expect(watch.track(Promise.resolve(7))).resolves.toBe(7);
    watch.close();
    expect((client as unknown as EventEmitter).listenerCount('close')).toBe(0);
  });

  it('a call still unanswered after the deadline is lost, an answered one settles with its answer', async () => {
    const watch = new CallWatch(fakeClient(), 50);
    const slow = watch.track(never());
    const answered = watch.track(Promise.reject(new Error('refused')));
    await expect(answered).rejects.toThrow('refused');
    await expect(slow).rejects.toThrow(/no answer within 50 ms/);
    expect(watch.pending).toBe(0);
  });
});
