// applyHistoryTransaction on sessionkit: each transaction is written by one commit that
// records its operation id, so a repeat after a lost reply writes nothing.
import type {
  SessionHistoryReplaceSuffixTransaction,
  SessionHistoryTransactionArgs,
} from '@openai/agents-core';
import { hashText, sameItems } from './canonical-json.js';
import { errors } from './errors.js';
import { transactionOperationIds } from './operation-ids.js';
import type { SessionHistory } from './session-history.js';
import { checkTransactionArgs } from './transaction-args.js';

/**
 * Applies one history transaction, at most once per operation id:
 * 1. the write's id already recorded → the claim of this transaction's digest tells a
 *    repeat (return, nothing written) from another transaction under the same id
 *    (`conflict`, nothing written);
 * 2. otherwise an empty commit records the claim, then one commit makes the change and
 *    records the write's id in the same atomic step (`append` for `append_items`;
 *    `truncate` + `append` under the revision the suffix was read at for
 *    `replace_suffix`, re-read when another writer got in first).
 * Throws `invalid_argument` (bad arguments, before any I/O), `conflict` (the expected
 * suffix is not the stored one, or the id names another transaction; nothing written to
 * the history), and what the store throws.
 */
export async function applyHistoryTransaction(
  history: SessionHistory,
  args: SessionHistoryTransactionArgs,
): Promise<void> {
  const { operationId, transaction, json } = checkTransactionArgs(args);
  const ids = transactionOperationIds(operationId, hashText(json));
  if (await history.recorded(ids.write)) {
    if (await history.recorded(ids.claim)) return;
    throw errors.make(
      'conflict',
      `history operation "${operationId}" of session "${history.id}" was already applied with a different transaction — nothing written`,
      { sessionId: history.id },
    );
  }
  await history.commit({ operationId: ids.claim });
  if (transaction.type === 'append_items') {
    await history.commit({ operationId: ids.write, append: transaction.items });
    return;
  }
  await replaceSuffix(history, ids.write, transaction);
}

async function replaceSuffix(
  history: SessionHistory,
  operationId: string,
  { expectedSuffix, replacement }: SessionHistoryReplaceSuffixTransaction,
): Promise<void> {
  await history.optimistically('applyHistoryTransaction', async () => {
    const window = await history.window(expectedSuffix.length);
    if (
      window.messages.length !== expectedSuffix.length ||
      !sameItems(window.messages, expectedSuffix, 'replace_suffix')
    ) {
      throw errors.make(
        'conflict',
        `session "${history.id}" does not end with the expected ${expectedSuffix.length} items — nothing written`,
        { sessionId: history.id },
      );
    }
    // A commit under this operation id that another caller landed meanwhile resolves
    // here as a repeat (the id is checked before the revision), never as a conflict.
    return history.commitOver(window, {
      operationId,
      truncate: window.messageCount - expectedSuffix.length,
      append: replacement,
    });
  });
}
