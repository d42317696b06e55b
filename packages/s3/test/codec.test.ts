// The stored records: what is written reads back equal, and what does not check out is
// refused with a reason (the store turns it into `corrupt`).
import { isSessionKitError } from '@sessionkit/core';
import { OperationLog } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import {
  headerFromJson,
  headerToJson,
  headFromText,
  headToText,
  type State,
  stateFromJson,
  stateToJson,
  versionFromText,
  versionToText,
} from '../src/codec.js';
import { shardOf, versionKey } from '../src/keys.js';

const header = {
  id: 'abc',
  title: 't',
  folder: '/f',
  model: '',
  provider: '',
  tokenCount: 1,
  costUsd: 0.5,
  turnCount: 1,
  metadata: { __proto__: 'data' },
  status: 'active',
  createdAt: new Date(Date.UTC(1, 0, 1)),
  updatedAt: new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)),
  revision: 3,
};
const state: State = {
  header,
  messageCount: 3,
  lineage: { rewrites: 1 },
  chain: { base: { n: 1, folded: false, count: 2 }, parts: [{ n: 3, end: 3 }] },
};

describe('records', () => {
  it('round-trip headers, states, versions and heads through JSON text', () => {
    expect(headerFromJson(JSON.parse(JSON.stringify(headerToJson(header))), 'abc')).toEqual(header);
    expect(stateFromJson(JSON.parse(JSON.stringify(stateToJson(state))), 'abc')).toEqual(state);
    const v = { n: 3, state, tombstone: false, append: [{ role: 'user', content: 'x' }] };
    expect(versionFromText(versionToText(v), 'abc', 3)).toEqual({
      ...v,
      messages: undefined,
      operationId: undefined,
    });
    const head = { gen: 'g1', n: 3, state, tombstone: true, operations: new OperationLog() };
    expect(headFromText(headToText(head), 'abc')).toEqual(head);
    // The operation ids a head remembers come back in order with their results.
    const operations = new OperationLog();
    operations.record('op-1', { revision: 2, messageCount: 2, updatedAt: new Date(5) });
    operations.record('op-2', { revision: 3, messageCount: 3, updatedAt: new Date(9) });
    const read = headFromText(headToText({ ...head, operations }), 'abc').operations;
    expect(read.entries()).toEqual(operations.entries());
    const v2 = { ...v, operationId: 'op-2' };
    expect(versionFromText(versionToText(v2), 'abc', 3)).toEqual({ ...v2, messages: undefined });
  });

  it('refuse records that do not check out, saying why', () => {
    expect(() => headerFromJson({ ...headerToJson(header), id: 'other' }, 'abc')).toThrow(
      /does not match/,
    );
    expect(() => headerFromJson({ ...headerToJson(header), tokenCount: -1 }, 'abc')).toThrow(
      /invalid header/,
    );
    expect(() =>
      stateFromJson({ ...(stateToJson(state) as object), messageCount: 4 }, 'abc'),
    ).toThrow(/chain does not end/);
    expect(() => headFromText('{"format":1,"gen":"../x","n":1}', 'abc')).toThrow(/generation/);
    expect(() => headFromText('{"format":99}', 'abc')).toThrow(/unknown format/);
    for (const text of [
      '',
      '{"format":1,"n":2}',
      '[1]',
      versionToText({ n: 3, state, tombstone: false }).slice(0, 40),
    ]) {
      const e = (() => {
        try {
          versionFromText(text, 'abc', 3);
        } catch (x) {
          return x;
        }
      })();
      expect(isSessionKitError(e, 'corrupt'), text).toBe(true);
    }
  });

  it('keys sort in version order and ids spread over shards', () => {
    expect(versionKey('a', 'g', 9) < versionKey('a', 'g', 10)).toBe(true);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 400; i++) counts[shardOf(`s-${i}`, 4)]! += 1;
    for (const c of counts) expect(c).toBeGreaterThan(60);
    expect(shardOf('same', 4)).toBe(shardOf('same', 4));
  });
});
