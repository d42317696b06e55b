// Progress reports and cancellation of the long helpers (export, import, enforceMax).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSessionKitError } from '../src/errors.js';
import { enforceMax } from '../src/helpers/enforce-max.js';
import { exportSessions, importSessions } from '../src/helpers/export-import.js';
import type { Progress } from '../src/helpers/progress.js';
import { FakeStore } from './fixtures/fake-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sk-progress-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function storeWith(n: number): Promise<FakeStore> {
  const store = new FakeStore();
  for (let i = 0; i < n; i++) {
    await store.create({
      id: `s${String(i).padStart(3, '0')}`,
      messages: [{ role: 'user', content: `m${i}` }],
    });
  }
  return store;
}

/** An AbortController that aborts once `onProgress` has seen `after` items of `phase`. */
function abortAfter(phase: string, after: number) {
  const controller = new AbortController();
  const seen: Progress[] = [];
  return {
    seen,
    options: {
      signal: controller.signal,
      onProgress: (p: Progress) => {
        seen.push(p);
        if (p.phase === phase && p.done >= after) controller.abort(new Error('stop here'));
      },
    },
  };
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );

describe('exportSessions with onProgress and signal', () => {
  it('reports each session exported', async () => {
    const store = await storeWith(5);
    const seen: Progress[] = [];
    const r = await exportSessions(store, join(dir, 'x.jsonl'), {
      onProgress: (p) => seen.push(p),
    });
    expect(r.exported).toBe(5);
    expect(seen).toEqual([1, 2, 3, 4, 5].map((done) => ({ phase: 'export', done })));
  });

  it('stops at the next session, removes its temp file and leaves the target untouched', async () => {
    const store = await storeWith(6);
    const { options } = abortAfter('export', 2);
    const e = await rejection(exportSessions(store, join(dir, 'x.jsonl'), options));
    expect(e?.message).toBe('stop here');
    expect(await readdir(dir)).toEqual([]);
  });

  it('an already aborted signal writes nothing; bad option types are invalid_argument', async () => {
    const store = await storeWith(2);
    const e = await rejection(
      exportSessions(store, join(dir, 'x.jsonl'), { signal: AbortSignal.abort() }),
    );
    expect((e as Error).name).toBe('AbortError');
    expect(await readdir(dir)).toEqual([]);
    for (const bad of [{ signal: {} }, { onProgress: 'x' }]) {
      const err = await rejection(exportSessions(store, join(dir, 'y.jsonl'), bad as never));
      expect(isSessionKitError(err, 'invalid_argument'), String(err)).toBe(true);
    }
  });
});

describe('importSessions with onProgress and signal', () => {
  it('reports the check pass, then each session with the total', async () => {
    const file = join(dir, 'x.jsonl');
    await exportSessions(await storeWith(3), file);
    const seen: Progress[] = [];
    await importSessions(new FakeStore(), file, { onProgress: (p) => seen.push(p) });
    expect(seen).toEqual([
      ...[1, 2, 3].map((done) => ({ phase: 'check', done })),
      ...[1, 2, 3].map((done) => ({ phase: 'import', done, total: 3 })),
    ]);
  });

  it('stops between sessions; a second run with onExisting "skip" finishes without duplicates', async () => {
    const file = join(dir, 'x.jsonl');
    const source = await storeWith(6);
    await exportSessions(source, file);
    const target = new FakeStore();
    const { options } = abortAfter('import', 2);
    const e = await rejection(importSessions(target, file, options));
    expect(e?.message).toBe('stop here');
    expect((await target.list({ limit: 100 })).length).toBe(2);
    const again = await importSessions(target, file, { onExisting: 'skip' });
    expect(again).toEqual({ imported: 4, skipped: 2 });
    const ids = (await target.list({ limit: 100 })).map((s) => s.id).sort();
    expect(ids).toEqual((await source.list({ limit: 100 })).map((s) => s.id).sort());
  });
});

describe('enforceMax with onProgress and signal', () => {
  it('reports rows scanned and sessions deleted', async () => {
    const store = await storeWith(7);
    const seen: Progress[] = [];
    expect(await enforceMax(store, 3, { pageSize: 2, onProgress: (p) => seen.push(p) })).toBe(4);
    expect(seen.filter((p) => p.phase === 'scan').map((p) => p.done)).toEqual([2, 4, 6, 7]);
    expect(seen.filter((p) => p.phase === 'delete').map((p) => p.done)).toEqual([1, 2, 3, 4]);
  });

  it('stops before a delete; what was deleted stays deleted and a later call finishes', async () => {
    const store = await storeWith(7);
    const { options } = abortAfter('delete', 1);
    const e = await rejection(enforceMax(store, 3, options));
    expect(e?.message).toBe('stop here');
    expect((await store.list({ limit: 100 })).length).toBe(6);
    expect(await enforceMax(store, 3)).toBe(3);
    expect((await store.list({ limit: 100 })).length).toBe(3);
  });
});
