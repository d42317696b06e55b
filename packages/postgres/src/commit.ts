// The turn write: `commit`, and the call `save` makes, with the result codes mapped to
// core's errors. A plain turn (append, counters, an operation id) is one statement that
// decides in the database (statements/append.ts); every other commit (a patch, replace,
// truncate) reads the session's state under its row lock, lets the kit's `planCommit`
// decide, and has sk_commit write the plan (statements/commit.ts).
import type { CommitInput, CommitResult } from '@sessionkit/core';
import {
  type CommitPlan,
  type CounterField,
  isCounterValue,
  LOST_RACE,
  planCommit,
  retryLostRaces,
  type SessionState,
  throwIfAborted,
} from '@sessionkit/core/adapter';
import type { PoolClient, QueryResult } from 'pg';
import { headerOfRow, parseMessageRows } from './codec.js';
import type { StoreContext } from './context.js';
import { throwOutOfRange } from './counters.js';
import { errors } from './errors.js';
import { lineageOf } from './lineage.js';
import { type SearchChunks, searchChunks, searchChunksIn } from './search-rows.js';
import { appendValues, type RefusalRow } from './statements/append.js';
import {
  type AppendRow,
  COMMIT_PARAMS,
  type CommitArgs,
  type CommitCode,
  type CommitRow,
  callValues,
} from './statements/commit.js';
import { LOST_TO_UNIQUE, queryOn } from './transaction.js';

/**
 * Commits `input` (validated by the base class) to session `id`: a plain turn in one
 * statement, any other commit by `planCommit` in one transaction. A repeated operation id
 * resolves with the first result and writes nothing. `signal` is checked before the write
 * and never after. Throws `not_found`, `conflict`, `invalid_argument` (a truncate past the
 * end, an increment leaving its range), `aborted`, `unavailable`.
 */
export async function commitRecord(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
  signal?: AbortSignal,
): Promise<CommitResult> {
  const plain =
    input.patch === undefined && input.replace === undefined && input.truncate === undefined;
  return retryLostRaces({ errors, operation: 'commit', sessionId: id, signal }, async () => {
    throwIfAborted(errors, signal, 'commit', id);
    try {
      return plain ? await appendTurn(ctx, id, input) : await plannedCommit(ctx, id, input, signal);
    } catch (e) {
      // Another commit recorded the same operation id first: run again, it replays.
      if (e === LOST_TO_UNIQUE) return LOST_RACE;
      throw e;
    }
  });
}

/**
 * The plain turn: one statement (the guarded UPDATE, the INSERTs of the new rows and of the
 * operation id). When it writes nothing, a second read tells why (an id recorded before
 * replays, whatever the expectations say); if nothing it reads forbids the turn any more (a
 * concurrent commit moved the counters back into range), the caller's loop runs it again.
 * An id recorded before fails the statement on the key: the recorded result is read then.
 */
async function appendTurn(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
): Promise<CommitResult | typeof LOST_RACE> {
  const messages = (input.append ?? []) as unknown[];
  const inc = input.increment ?? {};
  const search = searchChunksIn(ctx.search.scope, messages);
  const bodies = messages.map((m) => JSON.stringify(m));
  const q = ctx.statements.append;
  const named = input.operationId !== undefined;
  const statement = q.append(bodies.length, search.seqs.length, named);
  const values = appendValues({
    id,
    expectedRevision: input.expectedRevision,
    expectedMessageCount: input.expectedMessageCount,
    now: new Date(),
    bodies,
    search,
    incTokens: inc.tokenCount,
    incCost: inc.costUsd,
    incTurns: inc.turnCount,
    operationId: input.operationId,
  });
  let r: QueryResult<AppendRow>;
  try {
    r = await ctx.db.query(statement, values, { doing: 'commit', uniqueLosesRace: named });
  } catch (e) {
    if (e === LOST_TO_UNIQUE) return recordedResult(ctx, id, input.operationId as string);
    throw e;
  }
  const row = r.rows[0];
  if (row) {
    // The search rows went to search_pending: have the indexer take them shortly.
    if (row.code === 'ok' && search.seqs.length > 0) ctx.search.noteWrite();
    return resultOf(row);
  }
  const refusal = [id, input.operationId ?? null];
  const found = (await ctx.db.query(q.appendRefusal, refusal, { doing: 'commit' })).rows[0];
  // The check comes first: an id recorded meanwhile replays whatever the expectations say.
  if (found?.op_revision != null) return recordedOf(found);
  const code = refusalCode(found, input);
  if (code === undefined) return LOST_RACE;
  if (!found) throw errors.notFound(id);
  return resultOf(commitOutcome(id, { ...found, code, updated_at: null }, input));
}

/**
 * The result recorded for operation id `operationId` of session `id`, read after the turn's
 * INSERT of it failed on the key (the statement wrote nothing); none recorded (forgotten
 * meanwhile): the caller's loop runs the turn again.
 */
async function recordedResult(
  ctx: StoreContext,
  id: string,
  operationId: string,
): Promise<CommitResult | typeof LOST_RACE> {
  const q = ctx.statements.commit.operation;
  const found = (await ctx.db.query(q, [id, operationId], { doing: 'commit' })).rows[0];
  if (found === undefined) return LOST_RACE;
  return {
    revision: Number(found.revision),
    messageCount: found.message_count,
    updatedAt: found.updated_at,
  };
}

/** The result recorded for the commit's operation id, as a refusal read found it. */
function recordedOf(found: RefusalRow): CommitResult {
  return {
    revision: Number(found.op_revision),
    messageCount: found.op_message_count as number,
    updatedAt: found.op_updated_at as Date,
  };
}

/**
 * Any other commit, in one transaction: the session's state under its row lock (and the
 * result recorded for the operation id, read after the lock, so no commit naming it can
 * land in between), the kit's `planCommit`, then sk_commit writing exactly the plan.
 */
async function plannedCommit(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
  signal: AbortSignal | undefined,
): Promise<CommitResult> {
  const q = ctx.statements.commit;
  return ctx.db.tx('commit', async (c) => {
    const row = (await queryOn(c, q.lockForCommit, [id])).rows[0];
    if (!row) throw errors.notFound(id);
    const { header, messageCount } = headerOfRow(id, row);
    const stored: SessionState = { header, lineage: lineageOf(row), messageCount };
    const recorded =
      input.operationId === undefined
        ? undefined
        : (await queryOn(c, q.operation, [id, input.operationId])).rows[0];
    const plan = planCommit(
      errors,
      stored,
      input,
      recorded && {
        revision: Number(recorded.revision),
        messageCount: recorded.message_count,
        updatedAt: recorded.updated_at,
      },
    );
    if (plan.replayed) return plan.result;
    const kept = await keptSearchRows(ctx, c, id, row.search_epoch, stored, plan);
    throwIfAborted(errors, signal, 'commit', id);
    await runCommit(ctx, plannedArgs(ctx, stored, input, plan, kept), c);
    return plan.result;
  });
}

/**
 * For a truncate that drops messages: the search rows that rewrite the kept part of every
 * current search row holding messages on both sides of the cut (their old rows are deleted
 * by sk_commit), offsets relative to the cut. Pending rows past the cut are locked first,
 * so an indexer moving them has finished. Reads at most one search row's messages.
 */
async function keptSearchRows(
  ctx: StoreContext,
  c: PoolClient,
  id: string,
  epoch: string,
  stored: SessionState,
  plan: Extract<CommitPlan, { replayed: false }>,
): Promise<SearchChunks | undefined> {
  const keep = plan.messages.keep;
  if (keep === undefined || keep >= stored.messageCount || ctx.search.scope !== 'messages') {
    return undefined;
  }
  const q = ctx.statements.commit;
  await queryOn(c, q.lockPendingPast, [id, epoch, keep]);
  const start = (await queryOn(c, q.cutStart, [id, epoch, keep])).rows[0]?.start ?? null;
  if (start === null) return undefined;
  ctx.stats.messageBodyReads++;
  const rows = (await queryOn(c, q.bodiesBetween, [id, start, keep])).rows;
  const chunks = searchChunks(parseMessageRows(id, rows, start));
  if (chunks.seqs.length > 0) chunks.seqs[0] = 0;
  const shift = start - keep;
  return {
    seqs: chunks.seqs.map((o) => o + shift),
    nexts: chunks.nexts.map((o) => o + shift),
    texts: chunks.texts,
  };
}

/** The sk_commit arguments that write `plan` over `stored` (the header the plan computed). */
function plannedArgs(
  ctx: StoreContext,
  stored: SessionState,
  input: CommitInput<unknown>,
  plan: Extract<CommitPlan, { replayed: false }>,
  kept: SearchChunks | undefined,
): CommitArgs {
  const change = plan.messages;
  const messages = (change.replace ?? change.append) as unknown[];
  const search = searchChunksIn(ctx.search.scope, messages);
  if (kept !== undefined) {
    search.seqs.unshift(...kept.seqs);
    search.nexts.unshift(...kept.nexts);
    search.texts.unshift(...kept.texts);
  }
  const h = plan.state.header;
  const truncates = change.keep !== undefined && change.keep < stored.messageCount;
  return {
    id: h.id,
    input,
    expectedRevision: stored.header.revision,
    now: plan.result.updatedAt,
    replace: change.replace !== undefined,
    keep: truncates ? change.keep : undefined,
    operationId: plan.operationId,
    rewrite: plan.state.lineage.rewrites !== stored.lineage.rewrites,
    bodies: messages.map((m) => JSON.stringify(m)),
    search,
    // The title's search row is rewritten only when the commit patches the title.
    title: input.patch?.title === undefined ? undefined : h.title,
    indexTitle: ctx.search.scope !== 'none',
    folder: h.folder,
    status: h.status,
    model: h.model,
    provider: h.provider,
    tokenCount: h.tokenCount,
    costUsd: h.costUsd,
    turnCount: h.turnCount,
    metaReplace: true,
    metaSet: JSON.stringify(h.metadata),
    stateSet: true,
    state: h.state === undefined ? null : JSON.stringify(h.state),
    archivedSet: true,
    archived: h.archivedAt ?? null,
    modeSet: true,
    mode: h.mode ?? null,
    wantHeader: false,
  };
}

/**
 * Why an append wrote nothing, read after it: sk_commit's codes in sk_commit's order, or
 * undefined when nothing forbids the turn now.
 */
function refusalCode(
  found: RefusalRow | undefined,
  input: CommitInput<unknown>,
): Exclude<CommitCode, 'ok' | 'replayed'> | undefined {
  if (!found) return 'not_found';
  if (input.expectedRevision !== undefined && Number(found.revision) !== input.expectedRevision) {
    return 'conflict_revision';
  }
  if (
    input.expectedMessageCount !== undefined &&
    found.message_count !== input.expectedMessageCount
  ) {
    return 'conflict_count';
  }
  const inc = input.increment ?? {};
  // Core's range rule, as sk_count_ok / sk_cost_ok apply it in the statement.
  const leaves = (field: CounterField, stored: unknown, by: number | undefined) =>
    by !== undefined && !isCounterValue(field, Number(stored ?? 0) + by);
  const outOfRange =
    leaves('tokenCount', found.token_count, inc.tokenCount) ||
    leaves('turnCount', found.turn_count, inc.turnCount) ||
    leaves('costUsd', found.cost_usd, inc.costUsd);
  return outOfRange ? 'out_of_range' : undefined;
}

/**
 * Runs sk_commit through the pool, or on `client` inside its transaction (the caller's
 * write then commits later; scheduling the indexer early only costs it an empty pass).
 */
export async function runCommit(
  ctx: StoreContext,
  args: CommitArgs,
  client?: PoolClient,
): Promise<CommitRow> {
  const statement = ctx.statements.commit.commit;
  const values = callValues(COMMIT_PARAMS, args);
  const r = client
    ? await queryOn(client, statement, values)
    : await ctx.db.query(statement, values, { doing: 'commit' });
  const row = commitOutcome(args.id, r.rows[0], args.input ?? {});
  // New pending search rows (the messages', a title's): the indexer takes them shortly.
  if (args.search.seqs.length > 0 || args.title !== undefined) ctx.search.noteWrite();
  return row;
}

/**
 * The row of a successful sk_commit or append; throws for the other codes
 * (`out_of_range`: core's error for the increment that leaves its counter's range).
 */
function commitOutcome<R extends AppendRow>(
  id: string,
  row: R | undefined,
  input: CommitInput<unknown>,
): R {
  if (!row) throw errors.unavailable('commit: the commit function returned no row');
  switch (row.code) {
    case 'ok':
    case 'replayed':
      return row;
    case 'not_found':
      throw errors.notFound(id);
    case 'conflict_count':
      throw errors.messageCountConflict(
        id,
        input.expectedMessageCount ?? -1,
        row.message_count ?? -1,
      );
    case 'out_of_range':
      return throwOutOfRange(id, row, input);
    default:
      throw errors.conflict(id, input.expectedRevision ?? '?', Number(row.revision));
  }
}

function resultOf(row: AppendRow): CommitResult {
  return {
    revision: Number(row.revision),
    messageCount: row.message_count as number,
    updatedAt: row.updated_at as Date,
  };
}
