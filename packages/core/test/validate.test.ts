import { describe, expect, it } from 'vitest';
import {
  assertBranchPoint,
  assertCommitInput,
  assertId,
  assertMax,
  assertSaveInput,
  normalizeEventQuery,
  normalizeLimit,
  normalizeListOptions,
  prepareCreate,
} from '../src/adapter.js';
import { errorsFor, isSessionKitError } from '../src/errors.js';
import { isValidId } from '../src/ids.js';
import { assertJsonValue, jsonByteLength } from '../src/json-value.js';
import type { CommitInput, Session } from '../src/types.js';
import { assertText, DEFAULT_LIST_LIMIT } from '../src/validate.js';

const errors = errorsFor('test');

/** The error code `fn` throws, or `'ok'`. */
function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (e) {
    if (!isSessionKitError(e)) throw e;
    expect(e.message.startsWith('[sessionkit/test] ')).toBe(true);
    return e.code;
  }
}

describe('ids', () => {
  const valid = [
    'a',
    'A',
    '0',
    'x'.repeat(128),
    'a.b',
    'a..b',
    'trailing.',
    'a-b_c',
    '-leading-dash',
    '_under',
    '01JH3K8Q0M6W4V9F2S7XG1TZ5N',
  ];
  const invalid: unknown[] = [
    '',
    'x'.repeat(129),
    '../x',
    '..',
    '.',
    'a/b',
    'a\\b',
    'a\0b',
    '.hidden',
    '*',
    'a*',
    '{',
    'a{b}',
    'é',
    'a b',
    'a\nb',
    'a:b',
    '%2e',
    undefined,
    null,
    42,
    {},
    ['a'],
    Symbol('a'),
  ];

  it.each(valid)('accepts %s', (id) => {
    expect(isValidId(id)).toBe(true);
    expect(codeOf(() => assertId(errors, id))).toBe('ok');
  });

  it.each(invalid.map((v) => [v]))('rejects %s', (id) => {
    expect(isValidId(id)).toBe(false);
    expect(codeOf(() => assertId(errors, id))).toBe('invalid_argument');
  });

  it('names what was wrong without echoing huge values', () => {
    try {
      assertId(errors, 'y'.repeat(5000), 'parent id');
      expect.unreachable();
    } catch (e) {
      const message = (e as Error).message;
      expect(message).toContain('parent id');
      expect(message).toContain('5000 chars');
      expect(message.length).toBeLessThan(300);
    }
  });
});

describe('assertJsonValue', () => {
  const check = (v: unknown) => codeOf(() => assertJsonValue(errors, v, 'value'));

  it('accepts plain JSON, nested, shared (non-cyclic) references and null prototypes', () => {
    const shared = { s: 1 };
    const nullProto = Object.create(null) as Record<string, unknown>;
    nullProto.x = [1, 'two', null, { deep: [true, false] }];
    for (const v of [
      null,
      0,
      -1.5,
      '',
      'text',
      true,
      [],
      {},
      { a: [1, { b: { c: [null, 'x'] } }], u: '\u{1F600}' },
      { one: shared, two: shared, list: [shared, shared] },
      nullProto,
      { skipped: undefined, kept: 1 },
    ]) {
      expect(check(v)).toBe('ok');
    }
  });

  it('rejects what JSON cannot hold', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const cyclicArray: unknown[] = [1];
    cyclicArray.push([cyclicArray]);
    class Point {
      x = 1;
    }
    for (const v of [
      undefined,
      () => 1,
      { f() {} },
      10n,
      { big: 10n },
      Symbol('s'),
      { s: Symbol('s') },
      cyclic,
      cyclicArray,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      { n: Number.NEGATIVE_INFINITY },
      new Date(),
      { when: new Date() },
      { m: new Map() },
      [new Set()],
      new Point(),
      [1, undefined, 3],
      // biome-ignore lint/suspicious/noSparseArray: a hole reads as undefined
      [1, , 3],
      { nested: [{ ok: 1 }, [undefined]] },
      new Uint8Array(2),
      Object(1),
    ]) {
      expect(check(v), String(typeof v)).toBe('invalid_argument');
    }
  });

  it('names the path of the offending value', () => {
    try {
      assertJsonValue(errors, { a: [{ b: 1 }, { c: () => 1 }] }, 'state');
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).toContain('state');
      expect((e as Error).message).toContain('$.a[1].c');
    }
  });

  it('measures UTF-8 bytes of the JSON', () => {
    expect(jsonByteLength('é')).toBe(4); // "é" = quote + 2 bytes + quote
    expect(jsonByteLength({ a: 1 })).toBe(7);
  });
});

describe('normalizeListOptions', () => {
  const norm = (o?: unknown) => normalizeListOptions(errors, o as never);
  const code = (o: unknown) => codeOf(() => norm(o));

  it('applies defaults', () => {
    expect(norm()).toEqual({
      includeArchived: false,
      oldestFirst: false,
      limit: DEFAULT_LIST_LIMIT,
      offset: 0,
    });
    expect(norm({})).toEqual(norm());
    expect(norm({ limit: 0 }).limit).toBe(50);
    expect(norm({ limit: undefined }).limit).toBe(50);
  });

  it('accepts limits from 1 to 1000 and rejects the rest', () => {
    expect(norm({ limit: 1 }).limit).toBe(1);
    expect(norm({ limit: 1000 }).limit).toBe(1000);
    for (const limit of [1001, -1, 1.5, Number.NaN, '10', null, Number.POSITIVE_INFINITY]) {
      expect(code({ limit }), String(limit)).toBe('invalid_argument');
    }
    expect(codeOf(() => normalizeLimit(errors, -5, 'recent: limit'))).toBe('invalid_argument');
  });

  it('rejects unknown keys and non-object options', () => {
    expect(code({ limt: 10 })).toBe('invalid_argument');
    expect(code({ folder: 'x', orderBy: 'title' })).toBe('invalid_argument');
    expect(code(null)).toBe('invalid_argument');
    expect(code('folder')).toBe('invalid_argument');
  });

  it('validates filters and lower-cases the query', () => {
    const after = new Date('2024-05-01T00:00:00.123Z');
    expect(
      norm({
        folder: '/work/app',
        status: 'done',
        parentId: 'p-1',
        after,
        query: 'HeLLo Wörld',
        includeArchived: true,
        oldestFirst: true,
        offset: 5,
      }),
    ).toEqual({
      folder: '/work/app',
      status: 'done',
      parentId: 'p-1',
      after: after.getTime(),
      query: 'hello wörld',
      includeArchived: true,
      oldestFirst: true,
      limit: 50,
      offset: 5,
    });
    expect(norm({ query: '' }).query).toBeUndefined();
    expect(norm({ folder: '' }).folder).toBe('');
    expect(code({ folder: 5 })).toBe('invalid_argument');
    expect(code({ query: 'a\0b' })).toBe('invalid_argument');
    expect(code({ parentId: '../x' })).toBe('invalid_argument');
    expect(code({ after: '2024-01-01' })).toBe('invalid_argument');
    expect(code({ after: new Date(Number.NaN) })).toBe('invalid_argument');
    expect(code({ includeArchived: 'yes' })).toBe('invalid_argument');
    expect(code({ offset: -1 })).toBe('invalid_argument');
    expect(code({ offset: 1.5 })).toBe('invalid_argument');
  });

  it('validates the keyset cursor', () => {
    const at = new Date('2024-05-01T00:00:00Z');
    expect(norm({ startAfter: { updatedAt: at, id: 'abc' } }).startAfter).toEqual({
      updatedAt: at.getTime(),
      id: 'abc',
    });
    expect(norm({ startAfter: { updatedAt: at, id: '' } }).startAfter?.id).toBe('');
    for (const startAfter of [
      null,
      'abc',
      { id: 'abc' },
      { updatedAt: at },
      { updatedAt: at.getTime(), id: 'abc' },
      { updatedAt: at, id: 5 },
      { updatedAt: at, id: 'x'.repeat(129) },
      { updatedAt: at, id: 'a', extra: 1 },
    ]) {
      expect(code({ startAfter }), JSON.stringify(startAfter)).toBe('invalid_argument');
    }
  });
});

describe('assertCommitInput', () => {
  const code = (input: unknown) =>
    codeOf(() => assertCommitInput(errors, 's1', input as CommitInput));

  it('accepts well-formed commits', () => {
    for (const input of [
      {},
      { append: [] },
      { append: [{ role: 'user', content: 'hi' }], expectedRevision: 3 },
      { replace: [{ role: 'user', content: 'x' }], expectedMessageCount: 0 },
      {
        patch: {
          title: 't',
          status: 'done',
          tokenCount: 5,
          costUsd: 0.5,
          metadata: { a: 'b', gone: null },
          state: { plan: [1, 2] },
          archivedAt: new Date(),
          mode: null,
        },
        increment: { tokenCount: 10, costUsd: 0.25, turnCount: 1 },
      },
      { patch: { state: null, archivedAt: null } },
      { increment: { tokenCount: -3 } },
      // Whole surrogate pairs are fine; only lone halves are rejected.
      { patch: { title: 'emoji 🌍 \ud83d\ude00', metadata: { '🔑': '🌍' } } },
      // Messages are opaque JSON: lone surrogates there round-trip as JSON escapes.
      { append: [{ role: 'user', content: 'lone \ud83d' }] },
    ]) {
      expect(code(input), JSON.stringify(input)).toBe('ok');
    }
  });

  it('rejects append with replace, unknown keys and bad fields', () => {
    for (const input of [
      null,
      'append',
      { append: [], replace: [] },
      { appends: [] },
      { append: {} },
      { append: [() => 1] },
      { replace: [1, undefined] },
      { expectedRevision: 0 },
      { expectedRevision: 1.5 },
      { expectedRevision: '2' },
      { expectedMessageCount: -1 },
      { patch: null },
      { patch: { id: 'other' } },
      { patch: { revision: 3 } },
      { patch: { messages: [] } },
      { patch: { title: 5 } },
      { patch: { title: 'a\0b' } },
      { patch: { title: 'lone \ud83d high' } },
      { patch: { status: 'lone \udc00 low' } },
      { patch: { metadata: { 'k\udfff': 'v' } } },
      { patch: { tokenCount: -1 } },
      { patch: { turnCount: 1.5 } },
      { patch: { costUsd: Number.NaN } },
      { patch: { metadata: { k: 5 } } },
      { patch: { metadata: [] } },
      { patch: { state: { f: () => 1 } } },
      { patch: { archivedAt: '2024-01-01' } },
      { patch: { mode: 7 } },
      { increment: { tokenCount: 1.5 } },
      { increment: { costUsd: Number.POSITIVE_INFINITY } },
      { increment: { messages: 1 } },
    ]) {
      expect(code(input), JSON.stringify(input) ?? String(input)).toBe('invalid_argument');
    }
  });
});

describe('prepareCreate', () => {
  it('fills defaults: revision 1, empty history and children, createdAt = updatedAt = now', () => {
    const now = new Date('2024-06-01T12:00:00.000Z');
    const s = prepareCreate(errors, { id: 's1' }, now);
    expect(s).toEqual({
      id: 's1',
      title: '',
      folder: '',
      createdAt: now,
      updatedAt: now,
      model: '',
      provider: '',
      tokenCount: 0,
      costUsd: 0,
      turnCount: 0,
      metadata: {},
      status: 'active',
      messages: [],
      children: [],
      revision: 1,
    });
    expect('parentId' in s).toBe(false);
    expect('state' in s).toBe(false);
  });

  it('keeps given fields and timestamps, as imports need', () => {
    const createdAt = new Date('2020-01-01T00:00:00Z');
    const updatedAt = new Date('2021-01-01T00:00:00Z');
    const s = prepareCreate(errors, {
      id: 'child',
      parentId: 'parent',
      branchedAtTurn: 2,
      createdAt,
      updatedAt,
      status: 'done',
      mode: 'plan',
      archivedAt: updatedAt,
    });
    expect(s).toMatchObject({
      parentId: 'parent',
      branchedAtTurn: 2,
      createdAt,
      updatedAt,
      status: 'done',
      mode: 'plan',
      archivedAt: updatedAt,
    });
    // updatedAt defaults to a given createdAt.
    expect(prepareCreate(errors, { id: 'x', createdAt }).updatedAt).toEqual(createdAt);
  });

  it('deep-copies every value so later changes to the input do not leak in', () => {
    const input = {
      id: 's1',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      metadata: { a: 'b' },
      state: { plan: { steps: ['one'] } },
      createdAt: new Date('2024-01-01T00:00:00Z'),
    };
    const s = prepareCreate(errors, input);
    input.messages[0]!.content[0]!.text = 'changed';
    input.metadata.a = 'changed';
    input.state.plan.steps.push('two');
    input.createdAt.setFullYear(1999);
    expect(s.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    expect(s.metadata).toEqual({ a: 'b' });
    expect(s.state).toEqual({ plan: { steps: ['one'] } });
    expect(s.createdAt.toISOString()).toBe('2024-01-01T00:00:00.000Z');
  });

  it('rejects bad input', () => {
    const code = (input: unknown) => codeOf(() => prepareCreate(errors, input as never));
    for (const input of [
      null,
      {},
      { id: '../x' },
      { id: 's', parentId: 's' },
      { id: 's', parentId: 'a/b' },
      { id: 's', bogus: 1 },
      { id: 's', children: ['x'], revision: 2, extra: true },
      { id: 's', title: 5 },
      { id: 's', createdAt: '2024-01-01' },
      { id: 's', tokenCount: -1 },
      { id: 's', costUsd: Number.NaN },
      { id: 's', metadata: { k: 1 } },
      { id: 's', metadata: { '': 'x' } },
      { id: 's', messages: 'hi' },
      { id: 's', messages: [10n] },
      { id: 's', state: new Map() },
      { id: 's', branchedAtTurn: -2 },
      { id: 's', metadata: new Map([['a', 'b']]) },
      { id: 's', createdAt: new Date(2000), updatedAt: new Date(1000) },
    ]) {
      expect(
        code(input),
        JSON.stringify(input, (_k, v) => (typeof v === 'bigint' ? 'big' : v)),
      ).toBe('invalid_argument');
    }
    // A loaded session (with children, revision, messageCount) may be passed back in.
    expect(code({ id: 's', children: [], revision: 4, messageCount: 0 })).toBe('ok');
  });

  it('dates a session imported with only an old updatedAt no later than that', () => {
    const now = new Date('2026-01-01T00:00:00.000Z');
    const old = new Date('2024-05-05T05:05:05.005Z');
    const s = prepareCreate(errors, { id: 's', updatedAt: old }, now);
    expect(s.createdAt.getTime()).toBe(old.getTime());
    expect(s.updatedAt.getTime()).toBe(old.getTime());
    const future = new Date('2027-01-01T00:00:00.000Z');
    expect(prepareCreate(errors, { id: 's', updatedAt: future }, now).createdAt).toEqual(now);
  });

  it('drops undefined properties inside JSON values, as a serialising backend would', () => {
    const s = prepareCreate(errors, {
      id: 's',
      messages: [{ role: 'user', content: 'x', extra: undefined } as never],
      state: { a: 1, b: undefined } as never,
    });
    expect(Object.keys(s.messages[0] ?? {})).toEqual(['role', 'content']);
    expect(Object.keys((s.state ?? {}) as object)).toEqual(['a']);
  });
});

describe('assertSaveInput', () => {
  const base = (): Session => ({
    ...prepareCreate(errors, { id: 's1', messages: [{ role: 'user', content: 'x' }] }),
  });
  const code = (s: unknown) => codeOf(() => assertSaveInput(errors, s as Session));

  it('accepts a loaded session', () => {
    expect(code(base())).toBe('ok');
    expect(code({ ...base(), revision: 7, state: { a: 1 } })).toBe('ok');
  });

  it('requires a positive integer revision and the required fields', () => {
    for (const revision of [0, -1, 1.5, '1', undefined]) {
      expect(code({ ...base(), revision }), String(revision)).toBe('invalid_argument');
    }
    for (const key of ['title', 'folder', 'status', 'model', 'provider', 'messages']) {
      const s = base() as unknown as Record<string, unknown>;
      delete s[key];
      expect(code(s), key).toBe('invalid_argument');
    }
    expect(code({ ...base(), id: 'a b' })).toBe('invalid_argument');
    expect(code({ ...base(), nope: 1 })).toBe('invalid_argument');
    expect(code({ ...base(), messages: [Symbol('x')] })).toBe('invalid_argument');
    expect(code(null)).toBe('invalid_argument');
  });
});

describe('assertText', () => {
  const problem = (value: string) => {
    try {
      assertText(errors, value, 'title', 100);
      return 'ok';
    } catch (e) {
      return isSessionKitError(e) && e.code === 'invalid_argument'
        ? e.message.replace('[sessionkit/test] ', '')
        : String(e);
    }
  };

  it('takes whole surrogate pairs and refuses a lone half wherever it stands', () => {
    for (const text of ['', 'plain', 'é ü 漢字', '\ud83d\ude00', 'a\ud83c\udf0d\ud83d\ude00b']) {
      expect(problem(text), JSON.stringify(text)).toBe('ok');
    }
    for (const text of [
      '\ud83d',
      'x\ud83d',
      '\ude00x',
      '\ude00\ud83d',
      '\ud83d\ud83d\ude00',
      'a\udfffb',
    ]) {
      expect(problem(text), JSON.stringify(text)).toBe(
        'title contains a lone UTF-16 surrogate (not valid Unicode text)',
      );
    }
    expect(problem('a\u0000b')).toBe('title contains a NUL character');
    expect(problem('x'.repeat(101))).toBe('title is longer than 100 chars');
  });
});

describe('smaller validators', () => {
  it('normalizeEventQuery', () => {
    expect(normalizeEventQuery(errors)).toEqual({ afterSequence: 0, limit: undefined });
    expect(normalizeEventQuery(errors, { afterSequence: 3, limit: 10 })).toEqual({
      afterSequence: 3,
      limit: 10,
    });
    for (const q of [{ afterSequence: -1 }, { limit: 0 }, { limit: 10_001 }, { other: 1 }]) {
      expect(codeOf(() => normalizeEventQuery(errors, q as never))).toBe('invalid_argument');
    }
  });

  it('assertBranchPoint accepts 0..messageCount only', () => {
    expect(codeOf(() => assertBranchPoint(errors, 's', 0, 3))).toBe('ok');
    expect(codeOf(() => assertBranchPoint(errors, 's', 3, 3))).toBe('ok');
    for (const at of [-1, 4, 1.5, '1']) {
      expect(codeOf(() => assertBranchPoint(errors, 's', at, 3))).toBe('invalid_argument');
    }
  });

  it('assertMax accepts any safe integer', () => {
    for (const max of [-5, 0, 10]) expect(codeOf(() => assertMax(errors, max))).toBe('ok');
    for (const max of [1.5, '3', Number.NaN]) {
      expect(codeOf(() => assertMax(errors, max))).toBe('invalid_argument');
    }
  });
});
