// The writes that change a live session's messages or header: commit, save, merge. Each
// decides with core's rules against the version it replaces (re-deciding after a lost
// race) and writes one version object.
import type { CommitInput, CommitResult, Session } from '@sessionkit/core';
import {
  applyCommitToSummary,
  checkCommitExpectations,
  cloneJson,
  committedLineage,
  extendsHistory,
  nextUpdatedAt,
  parentToMergeInto,
  planMerge,
  readLineage,
  savedHeader,
  savedLineage,
  searchTextOf,
} from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { baseChain, chainAfterAppend, readAllMessages } from './history.js';
import type { State } from './records.js';
import { readLive } from './session-log.js';
import { changeSession } from './writes.js';

/**
 * commit(): appends are a part of the chain (only the new messages are written, nothing
 * stored is read), replaces a new base. Expectations are checked against the version
 * replaced; an unconditional commit that loses a race is re-applied to the winner's.
 */
export async function commitSession(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
): Promise<CommitResult> {
  const replace = input.replace === undefined ? undefined : (cloneJson(input.replace) as unknown[]);
  const append = input.append === undefined ? undefined : (cloneJson(input.append) as unknown[]);
  return changeSession(ctx, id, (current) => {
    const stored = current.state;
    checkCommitExpectations(
      errors,
      id,
      { revision: stored.header.revision, messageCount: stored.messageCount },
      input,
    );
    const now = nextUpdatedAt(stored.header.updatedAt);
    const { messageCount, ...header } = applyCommitToSummary(
      { ...stored.header, messageCount: stored.messageCount },
      input,
      now,
      errors,
    );
    const lineage = committedLineage(readLineage(stored.lineage), input);
    const n = current.n + 1;
    let state: State;
    let writes: { messages?: unknown[]; append?: unknown[]; text?: string } = {};
    if (replace !== undefined) {
      state = { header, messageCount, lineage, chain: baseChain(n, messageCount) };
      writes = { messages: replace, text: searchTextOf(replace) };
    } else if (append !== undefined && append.length > 0) {
      state = {
        header,
        messageCount,
        lineage,
        chain: chainAfterAppend(stored.chain, n, messageCount),
      };
      writes = { append, text: searchTextOf(append) };
    } else {
      state = { header, messageCount, lineage, chain: stored.chain };
    }
    return {
      next: { state, ...writes },
      result: () => ({ revision: header.revision, messageCount, updatedAt: new Date(now) }),
    };
  });
}

/** save(): the revision check, core's `savedHeader`, every message in one version. */
export async function saveSession(
  ctx: StoreContext,
  session: Session<unknown>,
  messages: unknown[],
): Promise<State> {
  const text = searchTextOf(messages);
  return changeSession(ctx, session.id, async (current) => {
    const stored = current.state;
    if (session.revision !== stored.header.revision) {
      throw errors.conflict(session.id, session.revision, stored.header.revision);
    }
    // Whether the new history extends the stored one decides the merge lineage; only a
    // save that could extend it (not shorter) needs the stored messages.
    const extended =
      messages.length >= stored.messageCount &&
      extendsHistory(await readAllMessages(ctx.io, current), messages);
    const header = savedHeader(stored.header, session);
    const state: State = {
      header,
      messageCount: messages.length,
      lineage: savedLineage(readLineage(stored.lineage), extended),
      chain: baseChain(current.n + 1, messages.length),
    };
    return { next: { state, messages, text }, result: () => state };
  });
}

/** merge(): core's `planMerge` against the parent's version replaced; the child's messages. */
export async function mergeSession(
  ctx: StoreContext,
  childId: string,
): Promise<{ state: State; messages: unknown[] }> {
  const child = await readLive(ctx.io, childId);
  const parentId = parentToMergeInto(errors, child.state.header);
  const messages = await readAllMessages(ctx.io, child);
  const text = searchTextOf(messages);
  return changeSession(ctx, parentId, (parent) => {
    const plan = planMerge(
      errors,
      {
        header: parent.state.header,
        lineage: readLineage(parent.state.lineage),
        messageCount: parent.state.messageCount,
      },
      { header: child.state.header, lineage: readLineage(child.state.lineage) },
    );
    const state: State = {
      header: plan.header,
      messageCount: messages.length,
      lineage: plan.lineage,
      chain: baseChain(parent.n + 1, messages.length),
    };
    return { next: { state, messages, text }, result: () => ({ state, messages }) };
  });
}
