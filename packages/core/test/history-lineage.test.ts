import { describe, expect, it } from 'vitest';
import type { SessionHeader } from '../src/adapter-rules.js';
import { errorsFor } from '../src/errors.js';
import {
  branchedLineage,
  committedLineage,
  createdLineage,
  extendsHistory,
  type HistoryLineage,
  mergedCounter,
  parentToMergeInto,
  planMerge,
  promotedChild,
  rootLineage,
  savedLineage,
} from '../src/history-lineage.js';
import { readLineage } from '../src/lineage-record.js';
import { codeOfCall as codeOf } from './fixtures/codes.js';

const errors = errorsFor('test');

function header(id: string, fields: Partial<SessionHeader> = {}): SessionHeader {
  return {
    id,
    title: `title ${id}`,
    folder: 'f',
    createdAt: new Date(1000),
    updatedAt: new Date(2000),
    model: '',
    provider: '',
    tokenCount: 0,
    costUsd: 0,
    turnCount: 0,
    metadata: {},
    status: 'active',
    revision: 3,
    ...fields,
  };
}

describe('lineage of writes', () => {
  it('a replace and a non-extending save are rewrites; appends are not', () => {
    const l = rootLineage();
    expect(committedLineage(l, {})).toEqual({ rewrites: 0 });
    expect(committedLineage(l, { replace: [] })).toEqual({ rewrites: 1 });
    expect(savedLineage(l, true)).toEqual({ rewrites: 0 });
    expect(savedLineage(l, false)).toEqual({ rewrites: 1 });
  });

  it('extendsHistory compares messages as JSON text, also against stored JSON texts', () => {
    const stored = [{ a: 1 }, 'two'];
    expect(extendsHistory(stored, [{ a: 1 }, 'two'])).toBe(true);
    expect(extendsHistory(stored, [{ a: 1 }, 'two', 3])).toBe(true);
    expect(extendsHistory(stored, [{ a: 1 }])).toBe(false);
    expect(extendsHistory(stored, [{ a: 2 }, 'two'])).toBe(false);
    expect(extendsHistory(['{"a":1}'], [{ a: 1 }, 'x'], true)).toBe(true);
    expect(extendsHistory(['{"a":1}'], [{ a: 1.5 }], true)).toBe(false);
  });

  it('a branch is based on the parent as it is; an import on its own creation', () => {
    const parent = header('p', { tokenCount: 10, costUsd: 0.5, turnCount: 2 });
    expect(branchedLineage(parent, { rewrites: 4 })).toEqual({
      rewrites: 0,
      base: {
        parentRewrites: 4,
        ownRewrites: 0,
        counters: { tokenCount: 10, costUsd: 0.5, turnCount: 2 },
      },
    });
    const imported = header('c', { parentId: 'p', tokenCount: 7 });
    expect(createdLineage(imported, { rewrites: 2 }).base).toMatchObject({
      parentRewrites: 2,
      counters: { tokenCount: 7 },
    });
    expect(createdLineage(imported, undefined).base?.parentRewrites).toBe(0);
    expect(createdLineage(header('r'), { rewrites: 9 })).toEqual({ rewrites: 0 });
  });

  it('readLineage accepts stored lineage and reads anything else as a fresh root', () => {
    for (const v of [undefined, null, 'x', 3]) expect(readLineage(v)).toEqual({ rewrites: 0 });
    const l: HistoryLineage = {
      rewrites: 2,
      base: {
        parentRewrites: 1,
        ownRewrites: 0,
        counters: { tokenCount: 1, costUsd: 2, turnCount: 3 },
      },
    };
    expect(readLineage(JSON.parse(JSON.stringify(l)))).toEqual(l);
    expect(readLineage({ rewrites: 1, base: {} })).toEqual({
      rewrites: 1,
      base: { parentRewrites: 0, ownRewrites: -1 },
    });
  });
});

describe('planMerge', () => {
  const parentHeader = header('p', { tokenCount: 107, costUsd: 0.3, turnCount: 3, revision: 9 });
  const base = {
    parentRewrites: 0,
    ownRewrites: 0,
    counters: { tokenCount: 100, costUsd: 0.1, turnCount: 2 },
  };
  const child = {
    header: header('c', {
      parentId: 'p',
      branchedAtTurn: 2,
      tokenCount: 150,
      costUsd: 0.1,
      turnCount: 4,
    }),
    lineage: { rewrites: 0, base },
  };

  it('keeps the parent counters and adds what the branch gained', () => {
    const plan = planMerge(
      errors,
      { header: parentHeader, lineage: { rewrites: 0 }, messageCount: 2 },
      child,
      new Date(1500),
    );
    expect(plan.header).toMatchObject({
      id: 'p',
      title: 'title p',
      tokenCount: 157,
      costUsd: 0.3,
      turnCount: 5,
      revision: 10,
    });
    // The clock is behind the stored updatedAt: still strictly forward.
    expect(plan.header.updatedAt.getTime()).toBe(2001);
    expect(plan.lineage).toEqual({ rewrites: 0 });
  });

  it('diverges when the parent has more or fewer messages than the branch point', () => {
    for (const messageCount of [1, 3]) {
      expect(
        codeOf(() =>
          planMerge(
            errors,
            { header: parentHeader, lineage: { rewrites: 0 }, messageCount },
            child,
          ),
        ),
      ).toBe('merge_diverged');
    }
  });

  it('diverges when the parent rewrote its history since the base', () => {
    expect(
      codeOf(() =>
        planMerge(
          errors,
          { header: parentHeader, lineage: { rewrites: 1 }, messageCount: 2 },
          child,
        ),
      ),
    ).toBe('merge_diverged');
  });

  it('a branch that rewrote its own history rewrites the parent', () => {
    const rewritten = { ...child, lineage: { rewrites: 1, base } };
    const plan = planMerge(
      errors,
      { header: parentHeader, lineage: { rewrites: 5 }, messageCount: 2 },
      { ...rewritten, lineage: { rewrites: 1, base: { ...base, parentRewrites: 5 } } },
    );
    expect(plan.lineage.rewrites).toBe(6);
  });

  it('without a counter base the parent takes the branch counters', () => {
    const legacy = { header: child.header, lineage: readLineage(undefined) };
    const plan = planMerge(
      errors,
      { header: parentHeader, lineage: { rewrites: 0 }, messageCount: 2 },
      legacy,
    );
    expect(plan.header).toMatchObject({ tokenCount: 150, costUsd: 0.1, turnCount: 4 });
  });
});

describe('mergedCounter', () => {
  it('is exact when one side is unchanged, never negative, and bounded', () => {
    expect(mergedCounter(errors, 'c', 'costUsd', 0.1 + 0.2, 0.7, 0.1 + 0.2)).toBe(0.7);
    expect(mergedCounter(errors, 'c', 'costUsd', 0.7, 0.1 + 0.2, 0.1 + 0.2)).toBe(0.7);
    expect(mergedCounter(errors, 'c', 'tokenCount', 5, 0, 10)).toBe(0);
    expect(mergedCounter(errors, 'c', 'tokenCount', 107, 150, 100)).toBe(157);
    expect(
      codeOf(() =>
        mergedCounter(
          errors,
          'c',
          'tokenCount',
          Number.MAX_SAFE_INTEGER,
          Number.MAX_SAFE_INTEGER,
          1,
        ),
      ),
    ).toBe('invalid_argument');
    expect(
      codeOf(() => mergedCounter(errors, 'c', 'costUsd', Number.MAX_VALUE, Number.MAX_VALUE, 1)),
    ).toBe('invalid_argument');
  });
});

describe('promotedChild', () => {
  const aBase = {
    parentRewrites: 3,
    ownRewrites: 0,
    counters: { tokenCount: 1, costUsd: 0, turnCount: 1 },
  };
  const deleted = {
    header: header('b', { parentId: 'a', branchedAtTurn: 2 }),
    lineage: { rewrites: 0, base: aBase },
  };
  const child = {
    header: header('c', { parentId: 'b', branchedAtTurn: 5 }),
    lineage: {
      rewrites: 0,
      base: {
        parentRewrites: 0,
        ownRewrites: 0,
        counters: { tokenCount: 9, costUsd: 0, turnCount: 9 },
      },
    },
  };

  it('re-parents to the grandparent with the smaller branch point and the deleted base', () => {
    const p = promotedChild(child, deleted);
    expect(p.header.parentId).toBe('a');
    expect(p.header.branchedAtTurn).toBe(2);
    expect(p.header.revision).toBe(child.header.revision);
    expect(p.lineage).toEqual({ rewrites: 0, base: aBase });
    const earlier = promotedChild(
      { ...child, header: { ...child.header, branchedAtTurn: 1 } },
      deleted,
    );
    expect(earlier.header.branchedAtTurn).toBe(1);
  });

  it('marks its own rewrites unknown when the deleted session had rewritten', () => {
    const p = promotedChild(child, { ...deleted, lineage: { rewrites: 1, base: aBase } });
    expect(p.lineage.base?.ownRewrites).toBe(-1);
  });

  it('becomes a root when the deleted session was one, or was its own grandparent', () => {
    const fromRoot = promotedChild(child, { header: header('b'), lineage: rootLineage() });
    expect(fromRoot.header.parentId).toBeUndefined();
    expect('parentId' in fromRoot.header).toBe(false);
    expect(fromRoot.header.branchedAtTurn).toBe(5);
    expect(fromRoot.lineage).toEqual({ rewrites: 0 });
    const cycle = promotedChild(child, {
      header: header('b', { parentId: 'c' }),
      lineage: rootLineage(),
    });
    expect(cycle.header.parentId).toBeUndefined();
  });
});

describe('parentToMergeInto', () => {
  it('returns the parent id, and rejects a session without one as invalid_argument', () => {
    expect(parentToMergeInto(errors, { id: 'c', parentId: 'p' })).toBe('p');
    expect(codeOf(() => parentToMergeInto(errors, { id: 'c' }))).toBe('invalid_argument');
  });
});
