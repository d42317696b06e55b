// Random sequences of the Session methods, history transactions and mutations (fast-check),
// and one step of such a sequence run on any Session, for comparing two sessions op by op.
import type { AgentInputItem, MemorySession } from '@openai/agents-core';
import fc from 'fast-check';
import type { SessionKitSession } from '../../src/index.js';
import { asStored, assistantText, toolCall, toolResult, userParts, userText } from './items.js';

export type SessionOp =
  | { kind: 'getItems'; limit: number | undefined }
  | { kind: 'addItems'; items: AgentInputItem[] }
  | { kind: 'popItem' }
  | { kind: 'clearSession' }
  | { kind: 'append'; op: number; items: AgentInputItem[] }
  /** Expects the newest `take` items (one of them altered when `tamper`) to be replaced. */
  | {
      kind: 'replaceSuffix';
      op: number;
      take: number;
      tamper: boolean;
      replacement: AgentInputItem[];
    }
  /** Sends the previous transaction again, exactly. */
  | { kind: 'repeatTransaction' }
  | { kind: 'replaceCall'; callId: string; args: Record<string, number> };

const CALL_IDS = ['c1', 'c2', 'c3'];
const text = fc.string({ maxLength: 12, unit: 'grapheme' });
const callId = fc.constantFrom(...CALL_IDS);
const args = fc.dictionary(fc.constantFrom('a', 'b'), fc.integer({ min: 0, max: 9 }), {
  maxKeys: 2,
});

const item: fc.Arbitrary<AgentInputItem> = fc.oneof(
  text.map(userText),
  text.map(userParts),
  text.map(assistantText),
  fc.tuple(callId, args).map(([id, a]) => toolCall(id, a)),
  fc.tuple(callId, text).map(([id, t]) => toolResult(id, t)),
);
const items = fc.array(item, { maxLength: 4 });
const opIndex = fc.integer({ min: 0, max: 5 });

export const sessionOp: fc.Arbitrary<SessionOp> = fc.oneof(
  fc.record({
    kind: fc.constant('getItems' as const),
    limit: fc.option(fc.integer({ min: -1, max: 6 }), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('addItems' as const), items }),
  fc.constant({ kind: 'popItem' as const }),
  fc.constant({ kind: 'clearSession' as const }),
  fc.record({ kind: fc.constant('append' as const), op: opIndex, items }),
  fc.record({
    kind: fc.constant('replaceSuffix' as const),
    op: opIndex,
    take: fc.integer({ min: 0, max: 4 }),
    tamper: fc.boolean(),
    replacement: items,
  }),
  fc.constant({ kind: 'repeatTransaction' as const }),
  fc.record({ kind: fc.constant('replaceCall' as const), callId, args }),
);

/** What a step returned (as stored JSON), or that it threw. */
export type Outcome = { ok: unknown } | { threw: true };

type AnySession = SessionKitSession | MemorySession;

/**
 * Turns an op into the exact call both sessions get. Operation ids are numbered per
 * "epoch" between two clears: MemorySession forgets its ids on clearSession and
 * sessionkit does not (see the README), so an id is never reused across a clear here;
 * that case has a test of its own.
 */
export class OpRunner {
  #epoch = 0;
  #last: Parameters<AnySession['applyHistoryTransaction']>[0] | undefined;

  /** The call of `op`, given the reference session's current items for suffixes. */
  async prepare(
    op: SessionOp,
    reference: MemorySession,
  ): Promise<(s: AnySession) => Promise<unknown>> {
    switch (op.kind) {
      case 'getItems':
        return (s) => s.getItems(op.limit);
      case 'addItems':
        return (s) => s.addItems(structuredClone(op.items));
      case 'popItem':
        return (s) => s.popItem();
      case 'clearSession':
        this.#epoch++;
        this.#last = undefined;
        return (s) => s.clearSession();
      case 'append':
        return this.#transaction({
          operationId: this.#id(op.op),
          transaction: { type: 'append_items', items: op.items },
        });
      case 'replaceSuffix': {
        const expectedSuffix = op.take === 0 ? [] : await reference.getItems(op.take);
        if (op.tamper && expectedSuffix.length > 0) {
          expectedSuffix[0] = userText('not what is stored');
        }
        return this.#transaction({
          operationId: this.#id(op.op),
          transaction: { type: 'replace_suffix', expectedSuffix, replacement: op.replacement },
        });
      }
      case 'repeatTransaction':
        return this.#last === undefined ? async () => undefined : this.#transaction(this.#last);
      case 'replaceCall': {
        const replacement = toolCall(op.callId, op.args) as Extract<
          AgentInputItem,
          { type: 'function_call' }
        >;
        return (s) =>
          s.applyHistoryMutations({
            mutations: [{ type: 'replace_function_call', callId: op.callId, replacement }],
          });
      }
    }
  }

  #id(n: number): string {
    return `op-${n}@${this.#epoch}`;
  }

  #transaction(args: Parameters<AnySession['applyHistoryTransaction']>[0]) {
    this.#last = args;
    return (s: AnySession) => Promise.resolve(s.applyHistoryTransaction(structuredClone(args)));
  }
}

/** Runs `call`, returning its result as stored JSON, or that it threw. */
export async function outcomeOf(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    const value = await call();
    return { ok: value === undefined ? undefined : asStored(value) };
  } catch {
    return { threw: true };
  }
}
