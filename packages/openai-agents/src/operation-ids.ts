// The sessionkit operation ids a history transaction records. A caller's id may be longer
// than a store keeps (256 characters) or hold any text, so it is hashed; the prefix keeps
// the binding's ids apart from the application's own.
import { hashText } from './canonical-json.js';

const PREFIX = 'openai-agents';

/**
 * The ids of one transaction: `write`, recorded with the history change itself, and
 * `claim`, recorded (by an empty commit, just before) for the pair of the caller's id
 * and the transaction's digest, so a repeat can tell the same transaction from another.
 */
export function transactionOperationIds(
  operationId: string,
  digest: string,
): { write: string; claim: string } {
  const name = hashText(operationId);
  return { write: `${PREFIX}:tx:${name}`, claim: `${PREFIX}:claim:${name}:${digest}` };
}
