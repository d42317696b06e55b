import { describe, expect, it } from 'vitest';
import { incrementedCost, incrementedCount, isCounterValue } from '../src/counters.js';
import { errorsFor } from '../src/errors.js';
import { mergedCounter } from '../src/history-lineage.js';
import { codeOfCall as codeOf } from './fixtures/codes.js';

const errors = errorsFor('test');
const MAX = Number.MAX_SAFE_INTEGER;

describe('isCounterValue: the one range of tokenCount, turnCount and costUsd', () => {
  it('takes safe integers >= 0 for the integer counters', () => {
    for (const field of ['tokenCount', 'turnCount'] as const) {
      for (const ok of [0, 1, MAX]) expect(isCounterValue(field, ok), `${field} ${ok}`).toBe(true);
      for (const bad of [-1, 0.5, MAX + 1, Number.NaN, Number.POSITIVE_INFINITY, '1', null]) {
        expect(isCounterValue(field, bad), `${field} ${String(bad)}`).toBe(false);
      }
    }
  });

  it('takes finite numbers >= 0 for costUsd', () => {
    for (const ok of [0, 0.25, Number.MAX_VALUE]) expect(isCounterValue('costUsd', ok)).toBe(true);
    for (const bad of [-0.01, Number.NaN, Number.POSITIVE_INFINITY, '0.5', undefined]) {
      expect(isCounterValue('costUsd', bad), String(bad)).toBe(false);
    }
  });

  it('is the rule increments and merges apply: results outside are invalid_argument', () => {
    expect(incrementedCount(errors, 's', 'tokenCount', 5, -5)).toBe(0);
    expect(Object.is(incrementedCount(errors, 's', 'turnCount', 0, -0), 0)).toBe(true);
    expect(codeOf(() => incrementedCount(errors, 's', 'tokenCount', 5, -6))).toBe(
      'invalid_argument',
    );
    expect(codeOf(() => incrementedCount(errors, 's', 'turnCount', MAX, 1))).toBe(
      'invalid_argument',
    );
    expect(incrementedCost(errors, 's', 0.5, -0.5)).toBe(0);
    expect(codeOf(() => incrementedCost(errors, 's', Number.MAX_VALUE, Number.MAX_VALUE))).toBe(
      'invalid_argument',
    );
    expect(codeOf(() => mergedCounter(errors, 'c', 'tokenCount', MAX, 10, 0))).toBe(
      'invalid_argument',
    );
    expect(mergedCounter(errors, 'c', 'costUsd', 1, 0, 5)).toBe(0);
  });
});
