// What each store method's span says about its arguments and result. Readers see the
// arguments as `unknown` (a call can be bad input that the store is about to reject) and
// take only counts, numbers, flags, option names and ids: never a string the caller wrote
// into a message, a title, a folder, metadata, a router key or an event. They read data
// properties only, through their descriptors: a store reads its input once, and a getter
// or a proxy must not see the wrapper read it again.
import { types } from 'node:util';
import type { Attributes } from '@opentelemetry/api';
import { isValidId, LIST_OPTION_KEYS } from '@sessionkit/core';
import { jsonSizeOf } from './json-size.js';
import { SPAN_ATTRIBUTES as A, type StoreMethodName } from './names.js';

/** How one method is described. Every reader may assume nothing about its input. */
export interface OperationReader {
  /** The session the call names, from its arguments (the retry key; `sessionIds` attribute). */
  sessionId(args: readonly unknown[]): unknown;
  /** Messages the call hands to the store to write (counted when it succeeds). */
  messagesWritten?(args: readonly unknown[]): number;
  /** Attributes from the arguments, on every recording span. */
  request?(args: readonly unknown[], out: Attributes): void;
  /** Attributes from the result, on recording spans of calls that succeeded. */
  result?(result: unknown, args: readonly unknown[], out: Attributes): void;
}

/** The own data property `key` of `value`; `undefined` for an accessor, a proxy, a primitive. */
function field(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || types.isProxy(value)) return undefined;
  const d = Object.getOwnPropertyDescriptor(value, key);
  return d && 'value' in d ? d.value : undefined;
}

/** The length of an array that is not a proxy (its `length` is then plain data), else `undefined`. */
function arrayLength(value: unknown): number | undefined {
  // The proxy check first: `Array.isArray` throws on a revoked proxy.
  return !types.isProxy(value) && Array.isArray(value) ? value.length : undefined;
}

/** Sets `out[key]` to `value` when it is a finite number. */
function putNumber(out: Attributes, key: string, value: unknown): void {
  if (typeof value === 'number' && Number.isFinite(value)) out[key] = value;
}

/** Sets `out[key]` to the length of `value` when it is an array. */
function putLength(out: Attributes, key: string, value: unknown): void {
  const length = arrayLength(value);
  if (length !== undefined) out[key] = length;
}

/** Sets `out[key]` to the UTF-8 size of `value`'s JSON, when it can be had without running its code. */
function putBytes(out: Attributes, key: string, value: unknown): void {
  if (value === undefined) return;
  const bytes = jsonSizeOf(value);
  if (bytes !== undefined) out[key] = bytes;
}

/** Sets `out[key]` to an id the store accepted, never to anything else (an id is not text). */
export function putId(out: Attributes, key: string, value: unknown): void {
  if (isValidId(value)) out[key] = value;
}

const lengthOf = (value: unknown): number => arrayLength(value) ?? 0;
const firstArgument = (args: readonly unknown[]) => args[0];
const sessionOfFirst = (args: readonly unknown[]) => field(args[0], 'id');

/** The session a result names (`branch`, `clone`, `merge` return one). */
function sessionResult(result: unknown, _args: readonly unknown[], out: Attributes): void {
  putLength(out, A.messageCount, field(result, 'messages'));
  putNumber(out, A.revision, field(result, 'revision'));
}

function windowRequest(args: readonly unknown[], out: Attributes): void {
  const window = args[1];
  putNumber(out, A.windowLast, field(window, 'last'));
  putNumber(out, A.windowOffset, field(window, 'offset'));
  putNumber(out, A.windowLimit, field(window, 'limit'));
}

const bySessionArgument: OperationReader = { sessionId: firstArgument };
const byNone: OperationReader = { sessionId: () => undefined };

/** The reader of every store method. */
export const OPERATIONS: Record<StoreMethodName, OperationReader> = {
  create: {
    sessionId: sessionOfFirst,
    messagesWritten: (args) => lengthOf(field(args[0], 'messages')),
    request: (args, out) => putLength(out, A.messagesWritten, field(args[0], 'messages')),
    result: sessionResult,
  },
  load: {
    sessionId: firstArgument,
    result: (result, args, out) => {
      putLength(out, A.messagesRead, field(result, 'messages'));
      sessionResult(result, args, out);
    },
  },
  save: {
    sessionId: sessionOfFirst,
    messagesWritten: (args) => lengthOf(field(args[0], 'messages')),
    request: (args, out) => putLength(out, A.messagesWritten, field(args[0], 'messages')),
    result: sessionResult,
  },
  delete: bySessionArgument,
  list: {
    sessionId: () => undefined,
    request: (args, out) => {
      const options = args[0];
      if (typeof options !== 'object' || options === null) return;
      // Names from the documented set only: an unknown key (bad input) could be any text.
      const given = LIST_OPTION_KEYS.filter((k) => field(options, k) !== undefined);
      if (given.length > 0) out[A.listOptions] = given;
      putNumber(out, A.limit, field(options, 'limit'));
    },
    result: (result, _args, out) => putLength(out, A.resultCount, result),
  },
  close: byNone,
  commit: {
    sessionId: firstArgument,
    messagesWritten: (args) => {
      const input = args[1];
      return lengthOf(field(input, 'append')) + lengthOf(field(input, 'replace'));
    },
    request: (args, out) => {
      const input = args[1];
      const append = field(input, 'append');
      const replace = field(input, 'replace');
      out[A.messagesWritten] = lengthOf(append) + lengthOf(replace);
      out[A.commitReplace] = replace !== undefined;
      putNumber(out, A.commitTruncate, field(input, 'truncate'));
      out[A.commitConditional] =
        field(input, 'expectedRevision') !== undefined ||
        field(input, 'expectedMessageCount') !== undefined;
      out[A.commitOperationId] = field(input, 'operationId') !== undefined;
    },
    result: (result, args, out) => {
      putNumber(out, A.messageCount, field(result, 'messageCount'));
      putNumber(out, A.revision, field(result, 'revision'));
      // One turn's messages, already in memory: cheap. A `replace` is a whole history and
      // is not measured.
      putBytes(out, A.requestBytes, field(args[1], 'append'));
    },
  },
  branch: {
    sessionId: firstArgument,
    request: (args, out) => putNumber(out, A.atTurn, args[1]),
    result: sessionResult,
  },
  clone: { sessionId: firstArgument, result: sessionResult },
  merge: { sessionId: firstArgument, result: sessionResult },
  loadMessages: {
    sessionId: firstArgument,
    request: windowRequest,
    result: (result, _args, out) => putLength(out, A.messagesRead, result),
  },
  loadMessageWindow: {
    sessionId: firstArgument,
    request: windowRequest,
    result: (result, _args, out) => {
      putLength(out, A.messagesRead, field(result, 'messages'));
      putNumber(out, A.messageCount, field(result, 'messageCount'));
      putNumber(out, A.revision, field(result, 'revision'));
    },
  },
  saveRuntimeStatus: {
    sessionId: firstArgument,
    // At most 2 MiB by contract, and the measure the store's own limit uses.
    result: (_result, args, out) => putBytes(out, A.requestBytes, args[1]),
  },
  loadRuntimeStatus: {
    sessionId: firstArgument,
    result: (result, _args, out) => {
      out[A.statusFound] = result !== null && result !== undefined;
    },
  },
  bind: { sessionId: (args) => args[3] },
  resolve: {
    sessionId: () => undefined,
    result: (result, _args, out) => {
      out[A.routerResolved] = typeof result === 'string' && result !== '';
    },
  },
  unbind: byNone,
  follow: byNone,
  touch: byNone,
  recent: {
    sessionId: () => undefined,
    request: (args, out) => putNumber(out, A.limit, args[0]),
    result: (result, _args, out) => putLength(out, A.resultCount, result),
  },
  append: {
    sessionId: firstArgument,
    result: (result, args, out) => {
      putNumber(out, A.eventSequence, field(result, 'sequence'));
      putNumber(out, A.revision, field(result, 'revision'));
      putBytes(out, A.requestBytes, args[2]);
    },
  },
  events: {
    sessionId: firstArgument,
    request: (args, out) => {
      putNumber(out, A.afterSequence, field(args[1], 'afterSequence'));
      putNumber(out, A.limit, field(args[1], 'limit'));
    },
    result: (result, _args, out) => putLength(out, A.resultCount, result),
  },
  enforceMax: {
    sessionId: () => undefined,
    request: (args, out) => putNumber(out, A.pruneMax, args[0]),
    result: (result, _args, out) => putNumber(out, A.pruneDeleted, result),
  },
  repair: {
    sessionId: () => undefined,
    result: (result, _args, out) => {
      putNumber(out, A.repairRebuilt, field(result, 'rebuilt'));
      putLength(out, A.repairSkipped, field(result, 'skippedCorrupt'));
      putNumber(out, A.repairFixed, field(result, 'indexEntriesFixed'));
    },
  },
};

/** The session a call produced, for `sessionIds`: a new branch or clone, a merged parent, a resolved id. */
export function resultSessionId(operation: StoreMethodName, result: unknown): unknown {
  switch (operation) {
    case 'branch':
    case 'clone':
    case 'merge':
      return field(result, 'id');
    case 'resolve':
      return result;
    default:
      return undefined;
  }
}
