// The turn write: `commit` (one `append` statement for a patch-free turn, sk_commit
// otherwise) and the call `save` makes, with the result codes mapped to core's errors. The
// statements are built from the parameter tables in statements/commit.ts.
import type { CommitInput, CommitResult } from '@sessionkit/core';
import {
  type CounterField,
  commitRewritesHistory,
  isCounterValue,
  metadataPatchParts,
} from '@sessionkit/core/adapter';
import type { PoolClient } from 'pg';
import type { StoreContext } from './context.js';
import { throwOutOfRange } from './counters.js';
import { errors } from './errors.js';
import { searchChunksIn } from './search-rows.js';
import { appendValues, type RefusalRow } from './statements/append.js';
import {
  type AppendRow,
  COMMIT_PARAMS,
  type CommitArgs,
  type CommitCode,
  type CommitRow,
  callValues,
} from './statements/commit.js';
import { queryOn } from './transaction.js';

/**
 * Commits `input` to session `id` (validated by the caller) in one round trip: the
 * `append` statement for a turn without patch or replace, sk_commit otherwise (a refused
 * append takes a second statement to say why). Throws `not_found`, `conflict`,
 * `invalid_argument` (an increment leaving its range), `unavailable`.
 */
export async function commitTurn(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
): Promise<CommitResult> {
  const messages = (input.replace ?? input.append ?? []) as unknown[];
  if (input.patch === undefined && input.replace === undefined) {
    return appendTurn(ctx, id, input, messages);
  }
  const row = await runCommit(ctx, commitArgsOf(ctx, id, input, messages));
  return resultOf(row);
}

/** The sk_commit arguments of a commit with a patch or a replace. */
function commitArgsOf(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
  messages: unknown[],
): CommitArgs {
  const p = input.patch ?? {};
  const inc = input.increment ?? {};
  let metaSet: string | null = null;
  let metaDel: string[] | null = null;
  if (p.metadata) {
    // Core's reading of a metadata patch: null removes a key, a string sets it.
    const parts = metadataPatchParts(p.metadata);
    metaSet = JSON.stringify(parts.set);
    metaDel = parts.remove;
  }
  return {
    id,
    input,
    expectedRevision: input.expectedRevision,
    expectedMessageCount: input.expectedMessageCount,
    now: new Date(),
    replace: input.replace !== undefined,
    rewrite: commitRewritesHistory(input),
    bodies: messages.map((m) => JSON.stringify(m)),
    search: searchChunksIn(ctx.search.scope, messages),
    title: p.title,
    indexTitle: ctx.search.scope !== 'none',
    folder: p.folder,
    status: p.status,
    model: p.model,
    provider: p.provider,
    tokenCount: p.tokenCount === undefined ? undefined : p.tokenCount + 0,
    costUsd: p.costUsd === undefined ? undefined : p.costUsd + 0,
    turnCount: p.turnCount === undefined ? undefined : p.turnCount + 0,
    metaReplace: false,
    metaSet,
    metaDel,
    stateSet: p.state !== undefined,
    state: p.state === undefined || p.state === null ? null : JSON.stringify(p.state),
    archivedSet: p.archivedAt !== undefined,
    archived: p.archivedAt ?? null,
    modeSet: p.mode !== undefined,
    mode: p.mode ?? null,
    incTokens: inc.tokenCount,
    incCost: inc.costUsd,
    incTurns: inc.turnCount,
    wantHeader: false,
  };
}

/**
 * The patch-free turn: one statement (the guarded UPDATE and the INSERTs of the new rows).
 * When it writes nothing, a second read tells why; if nothing it reads forbids the turn
 * any more (a concurrent commit moved the counters back into range), it runs again.
 */
async function appendTurn(
  ctx: StoreContext,
  id: string,
  input: CommitInput<unknown>,
  messages: unknown[],
): Promise<CommitResult> {
  const inc = input.increment ?? {};
  const search = searchChunksIn(ctx.search.scope, messages);
  const bodies = messages.map((m) => JSON.stringify(m));
  const q = ctx.statements.append;
  const statement = q.append(bodies.length, search.seqs.length);
  for (;;) {
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
    });
    const r = await ctx.db.query(statement, values, { doing: 'commit' });
    const row = r.rows[0];
    if (row) {
      // The search rows went to search_pending: have the indexer take them shortly.
      if (search.seqs.length > 0) ctx.search.noteWrite();
      return resultOf(row);
    }
    const found = (await ctx.db.query(q.appendRefusal, [id], { doing: 'commit' })).rows[0];
    const code = refusalCode(found, input);
    if (code === undefined) continue;
    if (!found) throw errors.notFound(id);
    commitOutcome(id, { ...found, code, updated_at: null }, input);
  }
}

/**
 * Why an append wrote nothing, read after it: sk_commit's codes in sk_commit's order, or
 * undefined when nothing forbids the turn now.
 */
function refusalCode(
  found: RefusalRow | undefined,
  input: CommitInput<unknown>,
): Exclude<CommitCode, 'ok'> | undefined {
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
