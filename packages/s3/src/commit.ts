// The writes of a session's own history: commit and save, by the kit's plans, each one
// version object decided against the version it replaces (again after a lost race).
import type { CommitInput, CommitResult, Session } from '@sessionkit/core';
import { extendsHistory, planCommit, planSave, searchTextsOf } from '@sessionkit/core/adapter';
import type { State } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { baseChain, chainAfterAppend, chainTruncated, readAllMessages } from './history.js';
import type { NextVersion } from './session-log.js';
import { changeSession } from './writes.js';

/**
 * commit(): `planCommit` against the newest version — a repeated operation id (recorded in
 * the head or in a version past it) writes nothing and resolves with the first result.
 * An append writes a part holding only the new messages; a truncation cuts the chain
 * (reading and writing no kept message) before it; a replace writes a new base. The
 * operation id is recorded in the version itself, the write's atomic step.
 */
export async function commitSession(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
  signal?: AbortSignal,
): Promise<CommitResult> {
  return changeSession(
    ctx,
    id,
    (current) => {
      const stored = current.state;
      const plan = planCommit(errors, stored, input, current.operations.find(input.operationId));
      if (plan.replayed) return { result: () => plan.result };
      const n = current.n + 1;
      const { header, lineage, messageCount } = plan.state;
      const change = plan.messages;
      let next: NextVersion;
      if (change.replace !== undefined) {
        const chain = baseChain(n, messageCount);
        const texts = searchTextsOf(change.replace);
        next = { state: { header, lineage, messageCount, chain }, messages: change.replace, texts };
      } else {
        const kept =
          change.keep === stored.messageCount
            ? stored.chain
            : chainTruncated(stored.chain, change.keep);
        const appended = change.append.length > 0;
        const chain = appended ? chainAfterAppend(kept, n, messageCount) : kept;
        next = { state: { header, lineage, messageCount, chain } };
        if (appended)
          next = { ...next, append: change.append, texts: searchTextsOf(change.append) };
      }
      next.operationId = plan.operationId;
      return { next, result: () => plan.result };
    },
    signal,
    'commit',
  );
}

/** save(): `planSave` against the newest version; every message in one version. */
export async function saveSession(
  ctx: StoreContext,
  session: Session<unknown>,
  signal?: AbortSignal,
): Promise<State> {
  const messages = session.messages;
  const texts = searchTextsOf(messages);
  return changeSession(
    ctx,
    session.id,
    async (current) => {
      const stored = current.state;
      // A stale revision is refused by the plan before the stored messages are read.
      if (session.revision !== stored.header.revision) planSave(errors, stored, session, false);
      // Whether the new history extends the stored one decides the merge lineage; only a
      // save that could extend it (not shorter) needs the stored messages.
      const extended =
        messages.length >= stored.messageCount &&
        extendsHistory(await readAllMessages(ctx.io, current), messages);
      const planned = planSave(errors, stored, session, extended);
      const state: State = { ...planned, chain: baseChain(current.n + 1, messages.length) };
      return { next: { state, messages, texts }, result: () => state };
    },
    signal,
    'save',
  );
}
