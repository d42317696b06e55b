// The leak audit: what a span may hold, stated as a closed vocabulary. Every attribute key
// must be one of SPAN_ATTRIBUTES, every string value a method name, the store kind, an
// error code, a `list()` option name or (when asked for) a session id; everything else a
// number or a boolean. Exception events and status messages may hold an error code only.
// Text a caller wrote cannot pass this, whatever it is.

import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ERROR_CODES, isValidId, LIST_OPTION_KEYS } from '@sessionkit/core';
import { SPAN_ATTRIBUTES as A, RETRIED_CODES, STORE_METHODS } from '../../src/index.js';

/** What the spans of one run may say. */
export interface AuditRules {
  storeKind: string;
  /** Whether session ids may appear (`instrumentStore`'s `sessionIds`). */
  sessionIds: boolean;
}

/** Error codes a span may name: core's, and `aborted` (a signal that fired). */
export const KNOWN_CODES: ReadonlySet<string> = new Set([...ERROR_CODES, 'aborted']);
const LIST_OPTIONS: ReadonlySet<string> = new Set(LIST_OPTION_KEYS);
const KEYS: ReadonlySet<string> = new Set(Object.values(A));
const NAMES: ReadonlySet<string> = new Set(STORE_METHODS.map((m) => `sessionkit.${m}`));

/** The rule of one string-valued attribute, or `undefined` when only numbers and booleans may appear. */
function stringRule(key: string, span: ReadableSpan, rules: AuditRules) {
  switch (key) {
    case A.operation:
      return (v: string) => `sessionkit.${v}` === span.name;
    case A.storeKind:
      return (v: string) => v === rules.storeKind;
    case A.sessionId:
    case A.resultSessionId:
      return (v: string) => rules.sessionIds && isValidId(v);
    case A.errorType:
      return (v: string) => KNOWN_CODES.has(v);
    case A.retryOf:
      return (v: string) => RETRIED_CODES.has(v);
    default:
      return undefined;
  }
}

/** The problems of one span; none when it keeps to the vocabulary. */
export function auditSpan(span: ReadableSpan, rules: AuditRules): string[] {
  const problems: string[] = [];
  const where = `${span.name}`;
  if (!NAMES.has(span.name)) problems.push(`unexpected span name ${JSON.stringify(span.name)}`);
  for (const [key, value] of Object.entries(span.attributes)) {
    if (!KEYS.has(key)) {
      problems.push(`${where}: unknown attribute ${key}`);
      continue;
    }
    if (key === A.listOptions) {
      const ok = Array.isArray(value) && value.every((v) => LIST_OPTIONS.has(String(v)));
      if (!ok) problems.push(`${where}: ${key} = ${JSON.stringify(value)}`);
      continue;
    }
    const rule = stringRule(key, span, rules);
    const ok =
      typeof value === 'string'
        ? rule?.(value) === true
        : !rule && (typeof value === 'number' || typeof value === 'boolean');
    if (!ok) problems.push(`${where}: ${key} = ${JSON.stringify(value)}`);
  }
  for (const event of span.events) {
    const attrs = event.attributes ?? {};
    const ok =
      event.name === 'exception' &&
      Object.keys(attrs).every((k) => k === 'exception.type' || k === 'exception.message') &&
      attrs['exception.type'] === 'SessionKitError' &&
      KNOWN_CODES.has(String(attrs['exception.message']));
    if (!ok) problems.push(`${where}: event ${event.name} ${JSON.stringify(attrs)}`);
  }
  const message = span.status.message;
  if (message !== undefined && !KNOWN_CODES.has(message))
    problems.push(`${where}: status message ${JSON.stringify(message)}`);
  if (span.links.length > 0) problems.push(`${where}: has links`);
  return problems;
}
