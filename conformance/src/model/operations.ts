// Random operations for the model-based spec: plain data (so fast-check can shrink them
// and print them), each naming its sessions by position among the sessions that exist
// when it runs, so a shrunk sequence still means something.
import fc from 'fast-check';

const WORDS = ['alpha', 'Beta', 'gamma delta', 'ALPHA beta', 'epsilon', 'zeta'];

export type Text = { role: 'user' | 'assistant'; content: string };

/**
 * A session reference: the `k`-th newest existing session (modulo), or a missing id past
 * them. Small `k` (the ones fast-check prefers) name the sessions just written.
 */
export type Ref = number;

export type Operation =
  | {
      op: 'create';
      slot: number;
      folder: number;
      title: string;
      status: number;
      messages: Text[];
      tokenCount: number;
      parent: Ref | null;
      at: number;
    }
  | { op: 'load'; k: Ref }
  | {
      op: 'save';
      k: Ref;
      stale: boolean;
      title: string;
      folder: number;
      messages: 'same' | 'extend' | 'other';
      keepState: boolean;
    }
  | {
      op: 'commit';
      k: Ref;
      expectRevision: 'none' | 'right' | 'wrong';
      expectCount: 'none' | 'right' | 'zero';
      body: 'none' | 'append' | 'replace' | 'truncate';
      /** With body `truncate`: how many messages to keep (past the end is invalid). */
      keep: number;
      /** A name from a small set, so repeats are frequent. */
      operationId: string | null;
      messages: Text[];
      title: string | null;
      folder: number | null;
      archive: 'none' | 'set' | 'clear';
      state: 'none' | 'set' | 'clear';
      metadata: 'none' | 'set' | 'remove';
      increment: { tokenCount: number; costUsd: number; turnCount: number };
    }
  | { op: 'delete'; k: Ref }
  | {
      op: 'list';
      folder: number;
      status: number | null;
      query: string | null;
      includeArchived: boolean;
      oldestFirst: boolean;
      limit: number;
      offset: number;
    }
  | { op: 'branch'; k: Ref; at: number | 'end' }
  | { op: 'clone'; k: Ref }
  | { op: 'merge'; k: Ref }
  | { op: 'window'; k: Ref; last: number | null; offset: number; limit: number }
  | { op: 'saveStatus'; k: Ref; value: number }
  | { op: 'loadStatus'; k: Ref }
  | { op: 'event'; k: Ref; type: string }
  | { op: 'events'; k: Ref; after: number; limit: number | null }
  | { op: 'bind'; key: number; k: Ref }
  | { op: 'unbind'; key: number }
  | { op: 'follow'; key: number; target: 'tui' | 'clear' | Ref }
  | { op: 'resolve'; key: number; live: Ref | null }
  | { op: 'touch'; key: number }
  | { op: 'recent' }
  | { op: 'enforceMax'; max: number };

const ref = fc.nat({ max: 7 });
const text = fc.record({
  role: fc.constantFrom<'user' | 'assistant'>('user', 'assistant'),
  content: fc.constantFrom(...WORDS),
});
const texts = fc.array(text, { maxLength: 3 });

/** One random operation of any kind; kinds the store lacks are skipped when run. */
export const operationArb: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('create' as const),
      slot: fc.nat({ max: 4 }),
      folder: fc.nat({ max: 1 }),
      title: fc.constantFrom('', ...WORDS),
      status: fc.nat({ max: 1 }),
      messages: texts,
      tokenCount: fc.nat({ max: 3 }),
      parent: fc.option(ref, { nil: null, freq: 3 }),
      at: fc.nat({ max: 3 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('load' as const), k: ref }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('save' as const),
      k: ref,
      stale: fc.boolean(),
      title: fc.constantFrom(...WORDS),
      folder: fc.nat({ max: 1 }),
      messages: fc.constantFrom('same' as const, 'extend' as const, 'other' as const),
      keepState: fc.boolean(),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('commit' as const),
      k: ref,
      expectRevision: fc.constantFrom(
        'none' as const,
        'none' as const,
        'right' as const,
        'wrong' as const,
      ),
      expectCount: fc.constantFrom(
        'none' as const,
        'none' as const,
        'right' as const,
        'zero' as const,
      ),
      body: fc.constantFrom(
        'append' as const,
        'append' as const,
        'replace' as const,
        'truncate' as const,
        'none' as const,
      ),
      keep: fc.nat({ max: 5 }),
      operationId: fc.option(fc.constantFrom('op-a', 'op-b', 'op-c'), { nil: null, freq: 2 }),
      messages: texts,
      title: fc.option(fc.constantFrom(...WORDS), { nil: null, freq: 3 }),
      folder: fc.option(fc.nat({ max: 1 }), { nil: null, freq: 4 }),
      archive: fc.constantFrom('none' as const, 'none' as const, 'set' as const, 'clear' as const),
      state: fc.constantFrom('none' as const, 'set' as const, 'clear' as const),
      metadata: fc.constantFrom('none' as const, 'set' as const, 'remove' as const),
      increment: fc.record({
        tokenCount: fc.integer({ min: -3, max: 5 }),
        costUsd: fc.constantFrom(0, 0, 0.1, 0.25, -0.5),
        turnCount: fc.integer({ min: -1, max: 1 }),
      }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), k: ref }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('list' as const),
      folder: fc.nat({ max: 1 }),
      status: fc.option(fc.nat({ max: 1 }), { nil: null, freq: 3 }),
      query: fc.option(fc.constantFrom('alpha', 'beta', 'a b', 'gamma delta', 'alphabeta', 'ta'), {
        nil: null,
        freq: 2,
      }),
      includeArchived: fc.boolean(),
      oldestFirst: fc.boolean(),
      limit: fc.integer({ min: 1, max: 4 }),
      offset: fc.nat({ max: 2 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('branch' as const),
      k: ref,
      // 'end': at the parent's message count, the branch point a merge can fast-forward.
      at: fc.oneof({ weight: 3, arbitrary: fc.constant('end' as const) }, fc.nat({ max: 4 })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('clone' as const), k: ref }) },
  // `k` of a merge counts among the sessions that have a parent.
  { weight: 4, arbitrary: fc.record({ op: fc.constant('merge' as const), k: ref }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('window' as const),
      k: ref,
      last: fc.option(fc.nat({ max: 5 }), { nil: null }),
      offset: fc.nat({ max: 5 }),
      limit: fc.nat({ max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('saveStatus' as const),
      k: ref,
      value: fc.nat({ max: 9 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('loadStatus' as const), k: ref }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('event' as const),
      k: ref,
      type: fc.constantFrom('tool', 'note'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('events' as const),
      k: ref,
      after: fc.nat({ max: 3 }),
      limit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('bind' as const), key: fc.nat({ max: 2 }), k: ref }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('unbind' as const), key: fc.nat({ max: 2 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('follow' as const),
      key: fc.nat({ max: 2 }),
      target: fc.oneof(fc.constantFrom('tui' as const, 'clear' as const), ref),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('resolve' as const),
      key: fc.nat({ max: 2 }),
      live: fc.option(ref, { nil: null }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('touch' as const), key: fc.nat({ max: 2 }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('recent' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('enforceMax' as const),
      max: fc.integer({ min: 1, max: 3 }),
    }),
  },
);

/** The router keys operations use: `key` picks one. */
export const ROUTER_KEYS: [string, string, string][] = [
  ['telegram', 'chat-1', ''],
  ['telegram', 'chat-1', 'thread-a'],
  ['discord', 'chat-2', ''],
];
