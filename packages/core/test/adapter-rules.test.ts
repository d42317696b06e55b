import { describe, expect, it } from 'vitest';
import {
  assertFollowArgs,
  assertLiveSessionId,
  assertRouterTuple,
  branchHeader,
  cloneHeader,
  resolveRoute,
  runtimeStatusText,
  type SessionHeader,
  savedHeader,
} from '../src/adapter-rules.js';
import { errorsFor, isSessionKitError } from '../src/errors.js';
import type { Session } from '../src/types.js';
import { MAX_RUNTIME_STATUS_BYTES } from '../src/validate.js';

const errors = errorsFor('test');
const at = (ms: number) => new Date(Date.UTC(2024, 0, 1) + ms);
const code = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return isSessionKitError(e) ? e.code : 'foreign';
  }
};

const stored: SessionHeader = {
  id: 'p',
  title: 'parent',
  folder: '/w',
  parentId: 'gp',
  createdAt: at(0),
  updatedAt: at(5000),
  model: 'm',
  provider: 'x',
  tokenCount: 10,
  costUsd: 1.5,
  turnCount: 3,
  metadata: { k: 'v' },
  status: 'active',
  branchedAtTurn: 2,
  revision: 4,
  archivedAt: at(6000),
  mode: 'plan',
  state: { goal: 'g' },
};

describe('savedHeader', () => {
  it('takes the caller fields, keeps id/createdAt/parentId/branchedAtTurn, bumps revision and updatedAt', () => {
    const session = {
      ...stored,
      id: 'p',
      title: 'new',
      parentId: 'other',
      branchedAtTurn: 9,
      createdAt: at(1),
      archivedAt: undefined,
      mode: undefined,
      state: { n: [1] },
      messages: [],
      children: ['c'],
    } as Session<unknown>;
    const h = savedHeader(stored, session, at(1000)); // clock behind the stored updatedAt
    expect(h).toEqual({
      ...stored,
      title: 'new',
      revision: 5,
      updatedAt: at(5001),
      archivedAt: undefined,
      mode: undefined,
      state: { n: [1] },
    });
    expect('archivedAt' in h).toBe(false);
    expect(h.state).not.toBe(session.state);
    expect(savedHeader(stored, session, at(9000)).updatedAt).toEqual(at(9000));
  });
});

describe('branchHeader / cloneHeader', () => {
  it('a branch carries the parent fields and counters with its own identity', () => {
    const h = branchHeader(stored, 'b1', 2, at(7000));
    expect(h).toEqual({
      id: 'b1',
      title: 'parent',
      folder: '/w',
      parentId: 'p',
      createdAt: at(7000),
      updatedAt: at(7000),
      model: 'm',
      provider: 'x',
      tokenCount: 10,
      costUsd: 1.5,
      turnCount: 3,
      metadata: { k: 'v', branchedFrom: 'p' },
      status: 'active',
      branchedAtTurn: 2,
      revision: 1,
      mode: 'plan',
      // DESIGN: a branch holds the parent's state (a copy) and mode.
      state: { goal: 'g' },
    });
    expect(h.metadata).not.toBe(stored.metadata);
    expect(h.state).not.toBe(stored.state);
  });

  it('a clone drops the tree links and archive mark and records its source', () => {
    const h = cloneHeader(stored, 'c1', at(8000));
    expect(h).toEqual({
      ...stored,
      id: 'c1',
      parentId: undefined,
      branchedAtTurn: undefined,
      archivedAt: undefined,
      createdAt: at(8000),
      updatedAt: at(8000),
      metadata: { k: 'v', clonedFrom: 'p' },
      revision: 1,
    });
    expect(['parentId', 'branchedAtTurn', 'archivedAt'].some((k) => k in h)).toBe(false);
    expect(h.state).not.toBe(stored.state);
  });
});

describe('runtimeStatusText', () => {
  it('returns the JSON text and rejects bad ids, non-JSON and oversized values', () => {
    expect(runtimeStatusText(errors, 's', { ok: [1, 'é'] })).toBe('{"ok":[1,"é"]}');
    expect(code(() => runtimeStatusText(errors, '../x', {}))).toBe('invalid_argument');
    expect(code(() => runtimeStatusText(errors, 's', { f: () => 1 }))).toBe('invalid_argument');
    const big = 'x'.repeat(MAX_RUNTIME_STATUS_BYTES - 2); // with quotes: exactly the limit
    expect(runtimeStatusText(errors, 's', big).length).toBe(MAX_RUNTIME_STATUS_BYTES);
    expect(code(() => runtimeStatusText(errors, 's', `${big}x`))).toBe('too_large');
  });
});

describe('router rules', () => {
  it('checks tuples, follow arguments and live session ids', () => {
    expect(code(() => assertRouterTuple(errors, 'bind', 'tg', 'c', '', true))).toBe('ok');
    expect(code(() => assertRouterTuple(errors, 'bind', '', 'c', '', true))).toBe(
      'invalid_argument',
    );
    expect(code(() => assertRouterTuple(errors, 'unbind', '', '', ''))).toBe('ok');
    expect(code(() => assertRouterTuple(errors, 'touch', 'a', 'b\u0000', ''))).toBe(
      'invalid_argument',
    );
    expect(code(() => assertFollowArgs(errors, 'tg', 'c', 'tui'))).toBe('ok');
    expect(code(() => assertFollowArgs(errors, 'tg', 'c', ''))).toBe('ok');
    expect(code(() => assertFollowArgs(errors, '', 'c', 'tui'))).toBe('invalid_argument');
    expect(code(() => assertFollowArgs(errors, 'tg', 'c', 'a/b'))).toBe('invalid_argument');
    expect(code(() => assertLiveSessionId(errors, ''))).toBe('ok');
    expect(code(() => assertLiveSessionId(errors, '.hidden'))).toBe('invalid_argument');
  });

  it('resolve: a pin wins, "tui" follows the live session, else the binding', () => {
    expect(resolveRoute(undefined, 'live', 'bound')).toBe('bound');
    expect(resolveRoute(undefined, 'live', undefined)).toBe('');
    expect(resolveRoute('tui', 'live', 'bound')).toBe('live');
    expect(resolveRoute('tui', '', 'bound')).toBe('bound');
    expect(resolveRoute('pinned', 'live', 'bound')).toBe('pinned');
    expect(resolveRoute('', 'live', 'bound')).toBe('bound');
  });
});
