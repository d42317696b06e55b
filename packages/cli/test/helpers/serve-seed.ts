// What the viewer's tests look at: a branch tree with a merged, a diverged and an
// unmerged branch, a 20,000-message session, sessions whose stored strings try to inject
// markup, and messages in the shapes of several frameworks, with a tool call, a result and
// an inline image.
import type { Store } from '@sessionkit/core';
import { isBrancher, isCommitter, isEventLog, isRuntimeStatusStore } from '@sessionkit/core';

/** A 1×1 PNG, base64. */
export const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** Messages in the big session. */
export const BIG_SESSION_MESSAGES = 20_000;

/** Ids of what `seedViewerStore` made. */
export interface ViewerSeed {
  root: string;
  merged: string;
  diverged: string;
  ahead: string;
  big: string;
  scriptTitle: string;
  shapes: string;
}

/** A title that would run a script if it were not escaped. */
export const SCRIPT_TITLE = '<script>window.__pwned = 1</script> Pwn attempt';
/** A message that would run a handler if it were not escaped. */
export const ONERROR_TEXT = '<img src=x onerror="window.__pwned = 2"> look at this';

/** `store` as a store with every capability; throws when it lacks one. */
export function fullStore(store: Store<unknown>) {
  if (
    !isCommitter<unknown>(store) ||
    !isBrancher<unknown>(store) ||
    !isEventLog(store) ||
    !isRuntimeStatusStore(store)
  ) {
    throw new Error('the viewer tests need a store with every capability');
  }
  return store;
}

async function seedTree(store: ReturnType<typeof fullStore>) {
  const root = await store.create({
    id: 'tree-root',
    title: 'Parser bug',
    folder: '/work/app',
    model: 'gpt-5',
    provider: 'openai',
    metadata: { team: 'core', ticket: 'APP-12' },
    state: { plan: ['read', 'fix'], goal: 'comments survive' },
  });
  await store.commit(root.id, {
    append: [
      { role: 'user', content: 'Why does the parser drop comments?' },
      {
        role: 'assistant',
        content: 'Let me read the lexer.',
        toolCalls: [{ id: 'call-1', name: 'read_file', arguments: { path: 'src/lexer.ts' } }],
      },
      {
        role: 'tool',
        toolCallId: 'call-1',
        name: 'read_file',
        content: 'export function lex(src) {\n  // skips comments\n}',
      },
      { role: 'assistant', content: [{ type: 'text', text: 'The lexer skips them.' }] },
    ],
    increment: { turnCount: 2, tokenCount: 1200, costUsd: 0.012 },
  });
  const diverged = await store.branch(root.id, 2);
  await store.commit(diverged.id, {
    append: [{ role: 'user', content: 'Try a different approach' }],
    patch: { title: 'Different approach' },
  });
  const merged = await store.branch(root.id, 4);
  await store.commit(merged.id, {
    append: [
      { role: 'user', content: 'Keep comments as trivia tokens' },
      { role: 'assistant', content: 'Done: comments are trivia now.' },
    ],
    patch: { title: 'Trivia tokens' },
  });
  await store.merge(merged.id);
  const ahead = await store.branch(root.id, 6);
  await store.commit(ahead.id, {
    append: [{ role: 'user', content: 'Also keep doc comments' }],
    patch: { title: 'Doc comments' },
  });
  await store.saveRuntimeStatus(root.id, { tests: 'passed', suite: 'lexer' });
  await store.append(root.id, 'tool.run', { tool: 'read_file' });
  await store.append(root.id, 'merge', { from: merged.id });
  return { root: root.id, merged: merged.id, diverged: diverged.id, ahead: ahead.id };
}

async function seedBig(store: ReturnType<typeof fullStore>): Promise<string> {
  const big = await store.create({
    id: 'big-session',
    title: 'Twenty thousand messages',
    folder: '/work/big',
  });
  const batch = 2000;
  for (let start = 0; start < BIG_SESSION_MESSAGES; start += batch) {
    const append = Array.from({ length: batch }, (_, k) => ({
      role: (start + k) % 2 === 0 ? 'user' : 'assistant',
      content: `message number ${start + k + 1} of the long run`,
    }));
    await store.commit(big.id, { append });
  }
  return big.id;
}

async function seedShapes(store: ReturnType<typeof fullStore>): Promise<string> {
  const s = await store.create({
    id: 'framework-shapes',
    title: 'Framework message shapes',
    folder: '/work/shapes',
  });
  await store.commit(s.id, {
    append: [
      {
        id: 'u1',
        role: 'user',
        parts: [{ type: 'text', text: 'AI SDK question: weather in Oslo?' }],
      },
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          {
            type: 'tool-weather',
            toolCallId: 'w1',
            state: 'output-available',
            input: { city: 'Oslo' },
            output: { celsius: -3 },
          },
          { type: 'text', text: 'It is -3 °C in Oslo.' },
        ],
      },
      {
        id: 'mastra-1',
        role: 'assistant',
        content: { format: 2, parts: [{ type: 'text', text: 'Mastra says hello' }] },
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Here is a picture' },
          { type: 'image', mediaType: 'image/png', data: PNG_1X1 },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'tu-1', name: 'grep', input: { pattern: 'TODO' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'tu-1', content: 'src/a.ts:1: TODO' }],
      },
    ],
  });
  return s.id;
}

/** Fills `store` (every capability needed) with what the viewer tests look at. */
export async function seedViewerStore(raw: Store<unknown>): Promise<ViewerSeed> {
  const store = fullStore(raw);
  const tree = await seedTree(store);
  const big = await seedBig(store);
  const script = await store.create({
    id: 'script-title',
    title: SCRIPT_TITLE,
    folder: '/work/evil',
  });
  await store.commit(script.id, {
    append: [
      { role: 'user', content: ONERROR_TEXT },
      {
        role: 'assistant',
        content: [{ type: 'text', text: '"><svg onload="window.__pwned = 3">' }],
      },
    ],
    patch: { metadata: { '<b>key</b>': '<i onmouseover="window.__pwned = 4">value</i>' } },
  });
  const shapes = await seedShapes(store);
  return { ...tree, big, scriptTitle: script.id, shapes };
}
