// One JSON text per value, whatever the order of its keys: what two transactions (or a
// stored suffix and an expected one) are compared by, and what a transaction's digest is
// taken of. Items are stored as JSON, so JSON equality is the equality a store can keep.
import { createHash } from 'node:crypto';
import { errors } from './errors.js';

// Deeper than any store accepts (core's MAX_JSON_DEPTH is 512), so the store, not this
// walk, names the limit; the bound only keeps a hostile value from overflowing the stack.
const MAX_DEPTH = 600;

/**
 * The JSON text of `value` with every object's keys sorted (by UTF-16 code units) and
 * `undefined` properties dropped, as every serialising backend drops them. Throws
 * `invalid_argument` for what JSON cannot hold: functions, symbols, `BigInt`, non-finite
 * numbers, `undefined` array items, class instances (a `Date`, a `Uint8Array`), cycles.
 * `what` names the value in the message.
 */
export function canonicalJson(value: unknown, what: string): string {
  return encode(value, what, 0);
}

/** SHA-256 of a string, base64url: a fixed-length name for a caller's id of any length. */
export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function encode(value: unknown, what: string, depth: number): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw errors.invalid(`${what}: ${value} is not JSON`);
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      throw errors.invalid(`${what}: a ${typeof value} is not JSON`);
  }
  if (depth >= MAX_DEPTH) throw errors.invalid(`${what}: nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    const parts: string[] = [];
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || value[i] === undefined) {
        throw errors.invalid(`${what}: an array holds undefined at index ${i}`);
      }
      parts.push(encode(value[i], what, depth + 1));
    }
    return `[${parts.join(',')}]`;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    throw errors.invalid(`${what}: a ${String(name ?? 'class instance')} is not JSON`);
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const v = record[key];
    if (v === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${encode(v, what, depth + 1)}`);
  }
  return `{${parts.join(',')}}`;
}

/** True when two lists of JSON values are equal item by item (`canonicalJson` equality). */
export function sameItems(a: readonly unknown[], b: readonly unknown[], what: string): boolean {
  if (a.length !== b.length) return false;
  return a.every((item, i) => canonicalJson(item, what) === canonicalJson(b[i], what));
}
