// KeyedMutex (helpers/keyed-mutex.ts): FIFO per key, independent keys, timeouts that leave
// the queue as it was, and `run` releasing however its function ends.
import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../src/adapter.js';

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('KeyedMutex', () => {
  it('hands a key to its waiters first come, first served; other keys are free', async () => {
    const m = new KeyedMutex();
    const order: string[] = [];
    await m.acquire('a', 1_000, () => new Error('timeout'));
    expect(m.isHeld('a')).toBe(true);
    const waiters = ['w1', 'w2', 'w3'].map((name) =>
      m
        .acquire('a', 1_000, () => new Error('timeout'))
        .then(() => {
          order.push(name);
          m.release('a');
        }),
    );
    await m.acquire('b', 1_000, () => new Error('timeout')); // not blocked by 'a'
    m.release('b');
    expect(m.isHeld('b')).toBe(false);
    await tick();
    expect(order).toEqual([]); // 'a' is still held
    m.release('a');
    await Promise.all(waiters);
    expect(order).toEqual(['w1', 'w2', 'w3']);
    expect(m.isHeld('a')).toBe(false);
  });

  it('a waiter that times out rejects with onTimeout() and leaves the queue', async () => {
    const m = new KeyedMutex();
    await m.acquire('k', 1_000, () => new Error('unused'));
    const late = m.acquire('k', 5, () => new Error('waited too long'));
    await expect(late).rejects.toThrow('waited too long');
    const next = m.acquire('k', 1_000, () => new Error('unused'));
    m.release('k'); // goes to `next`, not to the waiter that gave up
    await next;
    expect(m.isHeld('k')).toBe(true);
    m.release('k');
    expect(m.isHeld('k')).toBe(false);
  });

  it('run() releases the key when its function throws, and returns its result', async () => {
    const m = new KeyedMutex();
    const fail = m.run(
      'r',
      1_000,
      () => new Error('timeout'),
      async () => {
        throw new Error('boom');
      },
    );
    await expect(fail).rejects.toThrow('boom');
    expect(m.isHeld('r')).toBe(false);
    await expect(
      m.run(
        'r',
        1_000,
        () => new Error('timeout'),
        async () => 42,
      ),
    ).resolves.toBe(42);
    expect(m.isHeld('r')).toBe(false);
  });
});
