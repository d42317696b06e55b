// Resuming after a hard kill: a session created in the target without its runtime status
// or all its events is completed by the next run, never duplicated.
import { MemoryStore } from '@sessionkit/memory';
import { describe, expect, it } from 'vitest';
import { copySession } from '../src/migrate/session-copy.js';
import { toCreateInput } from '../src/migrate/session-record.js';
import { seedStore } from './helpers/seed.js';
import { snapshot } from './helpers/snapshot.js';

describe('copySession', () => {
  it('completes a session an interrupted run left without status and with some events', async () => {
    const source = new MemoryStore();
    const target = new MemoryStore<unknown>();
    const ids = await seedStore(source);
    // What a kill right after the create and the first event leaves behind.
    await target.create(toCreateInput(await source.load(ids.root)));
    await target.append(ids.root, 'tool.run', { tool: 'ls', z: 1, a: 2 });

    expect(await copySession(source, target, ids.root)).toBe('resumed');
    expect(await copySession(source, target, ids.branch)).toBe('copied');
    expect(await copySession(source, target, ids.subBranch)).toBe('copied');
    expect(await copySession(source, target, ids.root)).toBe('resumed');
    expect(await copySession(source, target, 'no-such-session')).toBe('vanished');

    const mine = await snapshot(source);
    const theirs = await snapshot(target);
    expect(theirs.get(ids.root)).toEqual(mine.get(ids.root));
    expect(theirs.get(ids.branch)).toEqual(mine.get(ids.branch));
    expect(await target.events(ids.root)).toHaveLength(2);
  });

  it('refuses to resume over a different session with the same id', async () => {
    const source = new MemoryStore();
    const target = new MemoryStore();
    const ids = await seedStore(source);
    await target.create({ id: ids.root, title: 'someone else' });
    await expect(copySession(source, target, ids.root)).rejects.toThrow(
      /the target already holds a different session "root-1"/,
    );
    expect((await target.load(ids.root)).title).toBe('someone else');
  });
});
