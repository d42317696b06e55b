import { isSessionKitError, type SessionSummary, type Store } from '@sessionkit/core';
import type { Command } from 'commander';
import { storeUrlOf } from '../runtime/context.js';
import { withStore } from '../runtime/open.js';
import { oneLine, paint, useColor, writeJson, writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';
import { childrenOf } from './tree-walk.js';

/** A node of the branch tree as `--json` prints it. */
interface TreeNode {
  id: string;
  title: string;
  messageCount: number;
  branchedAtTurn?: number | undefined;
  archived: boolean;
  children: TreeNode[];
}

/** Walks `parentId` links up from `id` to the root (a missing parent ends the walk). */
async function rootOf(store: Store, id: string): Promise<string> {
  let current = await store.load(id);
  const seen = new Set([current.id]);
  while (current.parentId && !seen.has(current.parentId)) {
    try {
      current = await store.load(current.parentId);
    } catch (e) {
      if (isSessionKitError(e, 'not_found')) break;
      throw e;
    }
    seen.add(current.id);
  }
  return current.id;
}

function nodeOf(
  s: Pick<SessionSummary, 'id' | 'title' | 'messageCount' | 'branchedAtTurn' | 'archivedAt'>,
): TreeNode {
  return {
    id: s.id,
    title: s.title,
    messageCount: s.messageCount,
    branchedAtTurn: s.branchedAtTurn,
    archived: s.archivedAt !== undefined,
    children: [],
  };
}

/** The tree under `rootId`, depth first, each session visited once. */
async function buildTree(store: Store, rootId: string): Promise<TreeNode> {
  const root = await store.load(rootId);
  const top = nodeOf({ ...root, messageCount: root.messages.length });
  const seen = new Set([rootId]);
  const stack: TreeNode[] = [top];
  while (stack.length > 0) {
    const node = stack.pop()!;
    for (const child of await childrenOf(store, node.id)) {
      if (seen.has(child.id)) continue;
      seen.add(child.id);
      const childNode = nodeOf(child);
      node.children.push(childNode);
      stack.push(childNode);
    }
  }
  return top;
}

function renderTree(
  node: TreeNode,
  marked: string,
  color: boolean,
  prefix = '',
  last = true,
  depth = 0,
): string[] {
  const branch = depth === 0 ? '' : last ? '└─ ' : '├─ ';
  const title =
    node.title === '' ? paint(color, 'dim', '(untitled)') : `"${oneLine(node.title, 50)}"`;
  const facts = [
    node.branchedAtTurn !== undefined && depth > 0 ? `at message ${node.branchedAtTurn}` : '',
    `${node.messageCount} messages`,
    node.archived ? 'archived' : '',
  ].filter((f) => f !== '');
  const mark = node.id === marked ? paint(color, 'yellow', '  ◀') : '';
  const lines = [
    `${prefix}${branch}${paint(color, 'cyan', node.id)}  ${title}  ${paint(color, 'dim', facts.join(' · '))}${mark}`,
  ];
  const childPrefix = depth === 0 ? '' : `${prefix}${last ? '   ' : '│  '}`;
  node.children.forEach((child, i) => {
    lines.push(
      ...renderTree(child, marked, color, childPrefix, i === node.children.length - 1, depth + 1),
    );
  });
  return lines;
}

/** `tree <id>`: the branch tree that holds a session, from its root. */
export function registerTree(program: Command): void {
  program
    .command('tree')
    .argument('<id>', 'any session of the tree')
    .description('show the branch tree holding a session, from its root (◀ marks the session)')
    .option('--json', 'print the tree as nested JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ sessionkit tree 01JD8X3YB7Q0R0Z8W1V7T8K2QF
  $ sessionkit tree 01JD8X3YB7Q0R0Z8W1V7T8K2QF --json`,
    )
    .action((id: string, options: { json?: boolean }, command: Command) =>
      withStore(storeUrlOf(command), async ({ store, display }) => {
        runState.store = display;
        const tree = await buildTree(store, await rootOf(store, id));
        if (options.json) await writeJson(tree);
        else await writeOut(`${renderTree(tree, id, useColor()).join('\n')}\n`);
      }),
    );
}
