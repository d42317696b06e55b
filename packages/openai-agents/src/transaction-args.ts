// The arguments of applyHistoryTransaction, checked as the SDK's MemorySession checks them
// (same shapes, the SDK's own item schema), and copied once as JSON.
import {
  type AgentInputItem,
  protocol,
  type SessionHistoryTransaction,
  type SessionHistoryTransactionArgs,
} from '@openai/agents-core';
import { canonicalJson } from './canonical-json.js';
import { errors } from './errors.js';

/** A transaction read once from the caller's arguments: its id, a JSON copy, and its text. */
export interface CheckedTransaction {
  operationId: string;
  transaction: SessionHistoryTransaction;
  /** `canonicalJson` of the transaction: what tells two transactions apart. */
  json: string;
}

const FIELDS: Record<SessionHistoryTransaction['type'], readonly string[]> = {
  append_items: ['items'],
  replace_suffix: ['expectedSuffix', 'replacement'],
};

/**
 * Checks `args`: a non-blank `operationId`; a transaction of type `append_items`
 * (`items`) or `replace_suffix` (`expectedSuffix`, `replacement`) with no other key; item
 * arrays whose items the SDK's `ModelItem` schema accepts; JSON only (no `Uint8Array`,
 * class instances, functions, non-finite numbers). Throws `invalid_argument` before any
 * I/O.
 */
export function checkTransactionArgs(args: SessionHistoryTransactionArgs): CheckedTransaction {
  if (typeof args !== 'object' || args === null) {
    throw errors.invalid('applyHistoryTransaction: arguments must be an object');
  }
  const { operationId, transaction } = args;
  if (typeof operationId !== 'string' || operationId.trim() === '') {
    throw errors.invalid('applyHistoryTransaction: operationId must be a non-empty string');
  }
  if (typeof transaction !== 'object' || transaction === null) {
    throw errors.invalid('applyHistoryTransaction: transaction must be an object');
  }
  const fields = FIELDS[transaction.type as SessionHistoryTransaction['type']];
  if (!Object.hasOwn(FIELDS, transaction.type) || fields === undefined) {
    throw errors.invalid(
      `applyHistoryTransaction: unsupported transaction type ${JSON.stringify(String(transaction.type))}`,
    );
  }
  const keys = Object.keys(transaction);
  if (keys.length !== fields.length + 1 || !fields.every((f) => keys.includes(f))) {
    throw errors.invalid(
      `applyHistoryTransaction: a ${transaction.type} transaction has exactly the fields type, ${fields.join(', ')}`,
    );
  }
  const json = canonicalJson(transaction, 'applyHistoryTransaction: transaction');
  // The copy keeps the caller's key order (items are stored as they are); `json`, with
  // sorted keys, is only what two transactions are compared by.
  const copy = JSON.parse(JSON.stringify(transaction)) as Record<string, unknown>;
  for (const field of fields) checkItems(copy[field], field);
  return { operationId, transaction: copy as unknown as SessionHistoryTransaction, json };
}

function checkItems(items: unknown, field: string): asserts items is AgentInputItem[] {
  if (!Array.isArray(items)) {
    throw errors.invalid(`applyHistoryTransaction: ${field} must be an array of items`);
  }
  items.forEach((item, i) => {
    if (!protocol.ModelItem.safeParse(item).success) {
      throw errors.invalid(`applyHistoryTransaction: ${field}[${i}] is not a valid item`);
    }
  });
}
