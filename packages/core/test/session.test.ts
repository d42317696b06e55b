import { describe, expect, it } from 'vitest';
import { normalizeListOptions, prepareCreate } from '../src/adapter.js';
import { errorsFor, isSessionKitError } from '../src/errors.js';
import {
  AUTO_TITLE_LENGTH,
  applyCommitToSummary,
  autoTitle,
  checkCommitExpectations,
  cloneJson,
  compareListOrder,
  copySession,
  isSubSession,
  type ListableEntry,
  messageText,
  nextUpdatedAt,
  SEARCH_TEXT_SEPARATOR,
  searchTextMatches,
  searchTextOf,
  selectPage,
  titleFromText,
  toSummary,
} from '../src/session.js';
import type { CommitInput, SessionSummary } from '../src/types.js';

const errors = errorsFor('test');

describe('autoTitle', () => {
  const session = (title: string, messages: unknown[]) => ({ title, messages, other: 1 });

  it('titles from the first user message, skipping other roles', () => {
    const s = session('', [
      { role: 'system', content: 'You are helpful.' },
      { role: 'assistant', content: 'Hi!' },
      { role: 'user', content: 'Fix the login bug' },
      { role: 'user', content: 'second' },
    ]);
    const titled = autoTitle(s);
    expect(titled.title).toBe('Fix the login bug');
    expect(titled.other).toBe(1);
    expect(s.title).toBe(''); // the input is not mutated
  });

  it('never overwrites an existing title and returns the same object', () => {
    const s = session('Mine', [{ role: 'user', content: 'Other' }]);
    expect(autoTitle(s)).toBe(s);
  });

  it('leaves the session unchanged without user text', () => {
    const s = session('', [
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: '   \n\t ' },
    ]);
    expect(autoTitle(s)).toBe(s);
    expect(autoTitle(session('', []))).toEqual(session('', []));
  });

  it('uses the next user message when the first has no text (an image only)', () => {
    const s = session('', [
      { role: 'user', content: [{ type: 'image', mediaType: 'image/png', data: 'AAAA' }] },
      { role: 'user', content: 'Describe it' },
    ]);
    expect(autoTitle(s).title).toBe('Describe it');
  });

  it('collapses whitespace and reads content parts', () => {
    const s = session('', [
      {
        role: 'user',
        content: [
          { type: 'text', text: '  Refactor\n\nthe\t parser ' },
          { type: 'image', mediaType: 'image/png', url: 'https://x/y.png' },
          { type: 'text', text: 'please' },
        ],
      },
    ]);
    expect(autoTitle(s).title).toBe('Refactor the parser please');
  });

  it('cuts to 72 code points without splitting emoji', () => {
    expect(AUTO_TITLE_LENGTH).toBe(72);
    const long = '😀'.repeat(100);
    const t = autoTitle(session('', [{ role: 'user', content: long }])).title;
    expect(Array.from(t)).toHaveLength(72);
    expect(t).toBe('😀'.repeat(72));
    expect(/[\uD800-\uDFFF]/u.test(t)).toBe(false); // no lone surrogate halves

    const words = 'word '.repeat(30);
    const w = titleFromText(words);
    expect(Array.from(w).length).toBeLessThanOrEqual(72);
    expect(w.endsWith(' ')).toBe(false);
    expect(titleFromText('a'.repeat(72))).toBe('a'.repeat(72));
    expect(titleFromText('a'.repeat(73))).toBe('a'.repeat(72));
  });
});

describe('isSubSession', () => {
  it('is true only with a non-empty parentId', () => {
    expect(isSubSession({ parentId: 'p' })).toBe(true);
    expect(isSubSession({})).toBe(false);
    expect(isSubSession({ parentId: '' })).toBe(false);
    expect(isSubSession({ parentId: undefined })).toBe(false);
  });
});

describe('messageText / searchTextOf', () => {
  it('reads strings, content, text and text parts only', () => {
    expect(messageText('plain')).toBe('plain');
    expect(messageText({ role: 'user', content: 'hi' })).toBe('hi');
    expect(messageText({ text: 'a', content: 'b' })).toBe('a\nb');
    expect(
      messageText({
        content: ['s', { type: 'text', text: 't' }, { type: 'image', url: 'u' }, 5, null],
      }),
    ).toBe('s\nt');
    expect(
      messageText({
        role: 'assistant',
        content: '',
        toolCalls: [{ id: '1', name: 'grep', arguments: { q: 'secret' } }],
      }),
    ).toBe('');
    for (const v of [null, undefined, 42, true, []]) expect(messageText(v)).toBe('');
  });

  it('lower-cases each message after the separator, skipping empty ones', () => {
    const text = searchTextOf([
      { role: 'user', content: 'Hello WORLD' },
      { role: 'tool', content: [] },
      { role: 'assistant', content: 'ÉCOLE' },
    ]);
    expect(text).toBe(`${SEARCH_TEXT_SEPARATOR}hello world${SEARCH_TEXT_SEPARATOR}école`);
    expect(searchTextOf([])).toBe('');
  });

  it('never matches a query across two messages, and appends compose', () => {
    const a = [{ role: 'user', content: 'ends with foo' }];
    const b = [{ role: 'assistant', content: 'bar starts this' }];
    const text = searchTextOf([...a, ...b]);
    expect(searchTextOf(a) + searchTextOf(b)).toBe(text);
    expect(searchTextMatches(text, 'foo')).toBe(true);
    expect(searchTextMatches(text, 'bar starts')).toBe(true);
    for (const q of ['foobar', 'foo bar', 'foo\nbar', 'fooabar']) {
      expect(searchTextMatches(text, q.toLowerCase())).toBe(false);
    }
    // Two text parts of ONE message are one message's text, joined by a newline.
    const parts = searchTextOf([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Left' },
          { type: 'text', text: 'Right' },
        ],
      },
    ]);
    expect(searchTextMatches(parts, 'left\nright')).toBe(true);
  });

  it('no lower-cased string holds the separator', () => {
    const all = Array.from({ length: 0x3000 }, (_, i) => String.fromCodePoint(i)).join('');
    expect(all.toLowerCase().includes(SEARCH_TEXT_SEPARATOR)).toBe(false);
    expect(SEARCH_TEXT_SEPARATOR.toLowerCase()).not.toBe(SEARCH_TEXT_SEPARATOR);
  });
});

describe('applyCommitToSummary', () => {
  const header = (): Omit<SessionSummary, 'children'> => {
    const {
      children: _c,
      messages: _m,
      ...rest
    } = prepareCreate(
      errors,
      {
        id: 's1',
        title: 'old',
        metadata: { keep: 'k', drop: 'd' },
        state: { a: 1 },
        archivedAt: new Date('2024-01-01T00:00:00Z'),
        mode: 'plan',
        tokenCount: 10,
        costUsd: 1,
        turnCount: 2,
      },
      new Date('2024-01-01T00:00:00Z'),
    );
    return { ...rest, revision: 3, messageCount: 4 };
  };
  const now = new Date('2024-06-01T00:00:00Z');

  it('applies the patch, removes null metadata keys, bumps revision and updatedAt', () => {
    const before = header();
    const next = applyCommitToSummary(
      before,
      {
        append: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'y' },
        ],
        patch: {
          title: 'new',
          status: 'done',
          model: 'm',
          provider: 'p',
          folder: '/f',
          metadata: { drop: null, added: 'a', keep: 'k2' },
          state: { b: [2] },
          mode: 'act',
        },
      },
      now,
    );
    expect(next).toMatchObject({
      title: 'new',
      status: 'done',
      model: 'm',
      provider: 'p',
      folder: '/f',
      metadata: { keep: 'k2', added: 'a' },
      state: { b: [2] },
      mode: 'act',
      revision: 4,
      messageCount: 6,
      updatedAt: now,
    });
    expect('drop' in next.metadata).toBe(false);
    // The input header is untouched.
    expect(before.metadata).toEqual({ keep: 'k', drop: 'd' });
    expect(before.revision).toBe(3);
  });

  it('null clears archivedAt, state and mode', () => {
    const next = applyCommitToSummary(
      header(),
      { patch: { archivedAt: null, state: null, mode: null } },
      now,
    );
    expect('archivedAt' in next).toBe(false);
    expect('state' in next).toBe(false);
    expect('mode' in next).toBe(false);
    expect(next.messageCount).toBe(4);
  });

  it('increments counters and counts a replace', () => {
    const next = applyCommitToSummary(
      header(),
      { increment: { tokenCount: 5, costUsd: 0.5, turnCount: -2 }, replace: [1] },
      now,
    );
    expect(next).toMatchObject({ tokenCount: 15, costUsd: 1.5, turnCount: 0, messageCount: 1 });
  });

  it('rejects an increment whose result leaves the counter range, instead of clamping', () => {
    const cases: CommitInput<unknown>['increment'][] = [
      { turnCount: -3 },
      { tokenCount: -11 },
      { costUsd: -1.5 },
      { tokenCount: Number.MAX_SAFE_INTEGER },
      { costUsd: Number.MAX_VALUE },
    ];
    const big = { ...header(), costUsd: Number.MAX_VALUE };
    for (const increment of cases) {
      const base = increment?.costUsd === Number.MAX_VALUE ? big : header();
      expect(() => applyCommitToSummary(base, { increment }, now, errors)).toThrow(
        /^\[sessionkit\/test\] commit: increment\./,
      );
    }
  });

  it('stores -0 counters as 0 and keeps __proto__ metadata keys as data', () => {
    const next = applyCommitToSummary(
      header(),
      { patch: { tokenCount: -0, costUsd: -0, metadata: JSON.parse('{"__proto__":"x"}') } },
      now,
    );
    expect(Object.is(next.tokenCount, 0)).toBe(true);
    expect(Object.is(next.costUsd, 0)).toBe(true);
    expect(Object.getPrototypeOf(next.metadata)).toBe(Object.prototype);
    expect(Object.keys(next.metadata)).toContain('__proto__');
    expect(Object.getOwnPropertyDescriptor(next.metadata, '__proto__')?.value).toBe('x');
  });

  it('copies the patched state so later changes to the input do not leak in', () => {
    const state = { plan: ['a'] };
    const next = applyCommitToSummary(header(), { patch: { state } }, now);
    state.plan.push('b');
    expect(next.state).toEqual({ plan: ['a'] });
  });
});

describe('checkCommitExpectations', () => {
  const stored = { revision: 3, messageCount: 5 };
  it('passes matching or absent expectations and throws conflict otherwise', () => {
    expect(() => checkCommitExpectations(errors, 's', stored, {})).not.toThrow();
    expect(() =>
      checkCommitExpectations(errors, 's', stored, {
        expectedRevision: 3,
        expectedMessageCount: 5,
      }),
    ).not.toThrow();
    for (const input of [{ expectedRevision: 2 }, { expectedMessageCount: 4 }]) {
      try {
        checkCommitExpectations(errors, 's', stored, input);
        expect.unreachable();
      } catch (e) {
        expect(isSessionKitError(e, 'conflict')).toBe(true);
      }
    }
  });
});

describe('nextUpdatedAt', () => {
  it('moves strictly forward even when the clock does not', () => {
    const prev = new Date('2024-01-01T00:00:00.500Z');
    expect(nextUpdatedAt(prev, new Date('2024-01-01T00:00:01Z')).toISOString()).toBe(
      '2024-01-01T00:00:01.000Z',
    );
    expect(nextUpdatedAt(prev, new Date(prev.getTime())).getTime()).toBe(prev.getTime() + 1);
    expect(nextUpdatedAt(prev, new Date('2023-01-01T00:00:00Z')).getTime()).toBe(
      prev.getTime() + 1,
    );
    expect(nextUpdatedAt(undefined, prev)).toBe(prev);
    let t = new Date(0);
    const fixed = new Date(1000);
    for (let i = 0; i < 5; i++) {
      const n = nextUpdatedAt(t, fixed);
      expect(n.getTime()).toBeGreaterThan(t.getTime());
      t = n;
    }
  });
});

describe('copySession / toSummary', () => {
  it('copies deeply and summarises without messages', () => {
    const s = prepareCreate(errors, {
      id: 's1',
      messages: [{ role: 'user', content: 'a' }],
      state: { x: [1] },
    });
    const c = copySession(s);
    (c.messages[0] as { content: string }).content = 'changed';
    expect(s.messages[0]).toEqual({ role: 'user', content: 'a' });
    const summary = toSummary(s);
    expect('messages' in summary).toBe(false);
    expect(summary.messageCount).toBe(1);
    (summary.state as { x: number[] }).x.push(2);
    expect(s.state).toEqual({ x: [1] });
  });
});

describe('selectPage', () => {
  const at = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s));
  const entry = (id: string, sec: number, extra: Partial<ListableEntry> = {}): ListableEntry => ({
    id,
    updatedAt: at(sec),
    folder: '/a',
    status: 'active',
    title: '',
    searchText: '',
    ...extra,
  });
  const entries: ListableEntry[] = [
    entry('a1', 1, { title: 'Login BUG' }),
    entry('a2', 2, { searchText: 'the parser crashed' }),
    entry('a3', 3, { status: 'done' }),
    entry('b1', 3, { folder: '/b' }),
    entry('a4', 4, { parentId: 'a1' }),
    entry('a5', 5, { archivedAt: at(6) }),
    entry('a6', 3),
  ];
  const ids = (opts: object) =>
    selectPage(entries, normalizeListOptions(errors, opts)).map((e) => e.id);

  it('orders by updatedAt desc then id desc, and reverses with oldestFirst', () => {
    expect(ids({})).toEqual(['a4', 'b1', 'a6', 'a3', 'a2', 'a1']);
    expect(ids({ oldestFirst: true })).toEqual(['a1', 'a2', 'a3', 'a6', 'b1', 'a4']);
  });

  it('filters by folder, status, parentId, after and archived', () => {
    expect(ids({ folder: '/a' })).toEqual(['a4', 'a6', 'a3', 'a2', 'a1']);
    expect(ids({ status: 'done' })).toEqual(['a3']);
    expect(ids({ parentId: 'a1' })).toEqual(['a4']);
    expect(ids({ after: at(3) })).toEqual(['a4']);
    expect(ids({ includeArchived: true })[0]).toBe('a5');
    expect(ids({ folder: '/nope' })).toEqual([]);
  });

  it('searches title and message text case-insensitively', () => {
    expect(ids({ query: 'login bug' })).toEqual(['a1']);
    expect(ids({ query: 'PARSER' })).toEqual(['a2']);
    expect(ids({ query: 'nothing' })).toEqual([]);
  });

  it('pages with limit and offset', () => {
    expect(ids({ limit: 2 })).toEqual(['a4', 'b1']);
    expect(ids({ limit: 2, offset: 2 })).toEqual(['a6', 'a3']);
    expect(ids({ offset: 10 })).toEqual([]);
  });

  it('pages with a keyset cursor in both orders, including ties on updatedAt', () => {
    const all: string[] = [];
    let cursor: { updatedAt: Date; id: string } | undefined;
    for (;;) {
      const page = selectPage(
        entries,
        normalizeListOptions(errors, { limit: 2, ...(cursor ? { startAfter: cursor } : {}) }),
      );
      if (page.length === 0) break;
      all.push(...page.map((e) => e.id));
      const last = page[page.length - 1]!;
      cursor = { updatedAt: last.updatedAt, id: last.id };
    }
    expect(all).toEqual(['a4', 'b1', 'a6', 'a3', 'a2', 'a1']);
    expect(ids({ startAfter: { updatedAt: at(3), id: 'a6' } })).toEqual(['a3', 'a2', 'a1']);
    expect(ids({ oldestFirst: true, startAfter: { updatedAt: at(3), id: 'a3' } })).toEqual([
      'a6',
      'b1',
      'a4',
    ]);
    // A cursor whose entry is gone still positions correctly.
    expect(ids({ startAfter: { updatedAt: at(3), id: 'a5' } })).toEqual(['a3', 'a2', 'a1']);
  });

  it('compareListOrder compares dates and epoch numbers alike', () => {
    expect(
      compareListOrder({ updatedAt: 5, id: 'a' }, { updatedAt: new Date(5), id: 'b' }, true),
    ).toBe(-1);
    expect(
      compareListOrder({ updatedAt: 5, id: 'a' }, { updatedAt: 5, id: 'a' }, false) === 0,
    ).toBe(true);
  });
});

describe('cloneJson', () => {
  it('deep-copies plain JSON and drops undefined object properties', () => {
    const input = {
      a: [1, { b: 'x', gone: undefined }],
      n: null,
      s: 'é',
      deep: { list: [[1], [2]] },
    };
    const copy = cloneJson(input);
    expect(copy).toEqual({ a: [1, { b: 'x' }], n: null, s: 'é', deep: { list: [[1], [2]] } });
    expect(Object.keys(copy.a[1] as object)).toEqual(['b']);
    (copy.deep.list[0] as number[]).push(9);
    expect(input.deep.list[0]).toEqual([1]);
    expect(cloneJson('text')).toBe('text');
    expect(cloneJson(null)).toBeNull();
  });
});
