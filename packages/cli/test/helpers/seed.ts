// A store with what a migration must keep: a branch tree, events, runtime status, an
// archived session, metadata, state, counters, unicode and keys a backend may reorder.
import type { Store } from '@sessionkit/core';
import { isBrancher, isCommitter, isEventLog, isRuntimeStatusStore } from '@sessionkit/core';

/** Ids of what `seedStore` made. */
export interface Seeded {
  root: string;
  branch: string;
  subBranch: string;
  archived: string;
  other: string;
}

/** Fills `store` (which must have every capability) with a small, varied data set. */
export async function seedStore(store: Store): Promise<Seeded> {
  if (
    !isCommitter(store) ||
    !isBrancher(store) ||
    !isEventLog(store) ||
    !isRuntimeStatusStore(store)
  ) {
    throw new Error('seedStore needs a store with every capability');
  }
  const root = await store.create({
    id: 'root-1',
    title: 'Parser bug',
    folder: '/work/app',
    model: 'gpt-5',
    provider: 'openai',
    metadata: { team: 'core', zeta: 'last', alpha: 'first' },
    state: { plan: ['read', 'fix'], goal: 'comments survive' },
    mode: 'plan',
  });
  await store.commit(root.id, {
    append: [
      { role: 'user', content: 'Why does the parser drop comments? ünïcødé ✓' },
      {
        role: 'assistant',
        content: 'Let me look.',
        toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'lexer.ts', b: 1, a: 2 } }],
      },
      { role: 'tool', toolCallId: 'c1', name: 'read_file', content: 'export function lex() {}' },
      { role: 'assistant', content: [{ type: 'text', text: 'The lexer skips them.' }] },
    ],
    increment: { turnCount: 2, tokenCount: 420, costUsd: 0.003 },
  });
  const branch = await store.branch(root.id, 2);
  await store.commit(branch.id, {
    append: [{ role: 'user', content: 'Try a different approach' }],
    patch: { title: 'Alternative fix' },
  });
  const subBranch = await store.branch(branch.id, 1);
  await store.saveRuntimeStatus(root.id, { tests: 'passed', z: 1, a: [1, 2] });
  await store.append(root.id, 'tool.run', { tool: 'ls', z: 1, a: 2 });
  await store.append(root.id, 'tool.run', { tool: 'cat' });
  await store.append(branch.id, 'note', null);
  const archived = await store.create({
    id: 'old-1',
    title: 'Old chat',
    folder: '/work/old',
    createdAt: new Date('2024-01-02T03:04:05.678Z'),
    updatedAt: new Date('2024-02-03T04:05:06.789Z'),
    archivedAt: new Date('2024-03-04T05:06:07.890Z'),
    status: 'done',
    messages: [{ role: 'user', content: 'hello from the past' }],
  });
  const other = await store.create({ id: 'other-1', title: 'Another', folder: '/work/b' });
  return {
    root: root.id,
    branch: branch.id,
    subBranch: subBranch.id,
    archived: archived.id,
    other: other.id,
  };
}

/** Creates `n` small root sessions (for paging, pruning and interruption tests). */
export async function seedMany(store: Store, n: number, prefix = 's'): Promise<void> {
  for (let i = 0; i < n; i++) {
    await store.create({
      id: `${prefix}-${String(i).padStart(5, '0')}`,
      title: `Session ${i}`,
      folder: i % 2 === 0 ? '/even' : '/odd',
      updatedAt: new Date(Date.UTC(2025, 0, 1) + i * 1000),
      messages: [
        { role: 'user', content: `question ${i}` },
        { role: 'assistant', content: `answer ${i}` },
      ],
    });
  }
}
