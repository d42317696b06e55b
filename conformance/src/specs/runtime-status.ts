import {
  type Committer,
  MAX_RUNTIME_STATUS_BYTES,
  type RuntimeStatusStore,
  type Store,
} from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { createSession, expectCode, turn, turns } from './util.js';

type R = Store & RuntimeStatusStore;

/** A JSON string value whose encoding is exactly `bytes` UTF-8 bytes (quotes included). */
function statusOfBytes(bytes: number): string {
  // Two-byte characters make sure the cap counts UTF-8 bytes, not UTF-16 code units.
  const inner = bytes - 2;
  const twoByte = Math.floor(inner / 4);
  const value = 'é'.repeat(twoByte) + 'a'.repeat(inner - twoByte * 2);
  if (Buffer.byteLength(JSON.stringify(value)) !== bytes) throw new Error('statusOfBytes is wrong');
  return value;
}

/** Runtime status, kept apart from transcript writes. */
export const runtimeStatusSpec = defineSpec('runtime-status', 'RuntimeStatusStore', (t) => {
  t.test('status is null until saved, then round-trips', async (ctx) => {
    const store = ctx.store as R;
    const s = await createSession(ctx);
    expect(await store.loadRuntimeStatus(s.id)).toBeNull();
    const values = [
      { checks: [{ name: 'lint', ok: true }], eval: { score: 0.93 } },
      ['a', 1, null],
      'plain',
      42,
      true,
    ];
    for (const v of values) {
      await store.saveRuntimeStatus(s.id, v);
      expect(await store.loadRuntimeStatus(s.id)).toEqual(v);
    }
  });

  t.test('status of a missing session fails with not_found', async (ctx) => {
    const store = ctx.store as R;
    const id = ctx.id();
    await expectCode(store.saveRuntimeStatus(id, { a: 1 }), 'not_found');
    await expectCode(store.loadRuntimeStatus(id), 'not_found');
    await expectCode(store.load(id), 'not_found');
  });

  t.test(
    'exactly 2 MiB is accepted and one byte more is too_large with nothing written',
    async (ctx) => {
      const store = ctx.store as R;
      const s = await createSession(ctx);
      expect(MAX_RUNTIME_STATUS_BYTES).toBe(2 * 1024 * 1024);
      const max = statusOfBytes(MAX_RUNTIME_STATUS_BYTES);
      await store.saveRuntimeStatus(s.id, max);
      expect(await store.loadRuntimeStatus(s.id)).toBe(max);
      await store.saveRuntimeStatus(s.id, { small: true });
      const tooLarge = await expectCode(
        store.saveRuntimeStatus(s.id, statusOfBytes(MAX_RUNTIME_STATUS_BYTES + 1)),
        'too_large',
      );
      // DESIGN: messages name the adapter and the id.
      expect(tooLarge.message).toContain(s.id);
      expect(await store.loadRuntimeStatus(s.id)).toEqual({ small: true });
      const other = await createSession(ctx);
      await expectCode(
        store.saveRuntimeStatus(other.id, { blob: 'x'.repeat(MAX_RUNTIME_STATUS_BYTES) }),
        'too_large',
      );
      expect(await store.loadRuntimeStatus(other.id)).toBeNull();
    },
    { timeoutFactor: 2 },
  );

  t.test('save never overwrites status and status never touches the transcript', async (ctx) => {
    const store = ctx.store as R;
    const s = await createSession(ctx, { messages: turns(2), title: 'kept' });
    await store.saveRuntimeStatus(s.id, { phase: 'running' });
    const loaded = await store.load(s.id);
    expect(loaded.revision).toBe(s.revision);
    expect(loaded.messages).toEqual(turns(2));
    expect(loaded.title).toBe('kept');
    // A transcript writer holding the pre-status revision is not disturbed by the status write.
    const saved = await store.save({ ...s, title: 'renamed' });
    expect(saved.revision).toBe(2);
    expect(await store.loadRuntimeStatus(s.id)).toEqual({ phase: 'running' });
  });

  t.testFor(
    'RuntimeStatusStore',
    'commit never overwrites status',
    async (ctx) => {
      const store = ctx.store as R & Committer;
      const s = await createSession(ctx);
      await store.saveRuntimeStatus(s.id, { phase: 'a' });
      await store.commit(s.id, { append: turn(0), patch: { status: 'x' } });
      expect(await store.loadRuntimeStatus(s.id)).toEqual({ phase: 'a' });
      await store.saveRuntimeStatus(s.id, { phase: 'b' });
      expect((await store.load(s.id)).messages).toEqual(turn(0));
    },
    { requires: ['Committer'] },
  );

  t.test('status is caller-owned and deleted with its session', async (ctx) => {
    const store = ctx.store as R;
    const s = await createSession(ctx);
    const value = { list: [1, 2] };
    await store.saveRuntimeStatus(s.id, value);
    value.list.push(3);
    const got = (await store.loadRuntimeStatus(s.id)) as { list: number[] };
    expect(got).toEqual({ list: [1, 2] });
    got.list.push(4);
    expect(await store.loadRuntimeStatus(s.id)).toEqual({ list: [1, 2] });
    await store.delete(s.id);
    await store.create({ id: s.id });
    expect(await store.loadRuntimeStatus(s.id)).toBeNull();
  });
});
