// JSON values as every store must accept them: what round-trips through JSON unchanged,
// at most MAX_JSON_DEPTH levels deep, checked without recursion.
import type { ErrorFactory } from './errors.js';
import type { JsonValue } from './types.js';

/** Deepest nesting of a JSON value (messages, `state`, event payloads, runtime status). */
export const MAX_JSON_DEPTH = 512;

/** One value `assertJsonValue` still has to check: its depth and where it sits. */
type JsonFrame = { v: unknown; depth: number; parent: JsonFrame | undefined; key: string | number };

/** The path of a frame (`$.a[1].b`), built only for an error message. */
function jsonPathOf(f: JsonFrame): string {
  const keys: (string | number)[] = [];
  for (let c: JsonFrame | undefined = f; c?.parent; c = c.parent) keys.push(c.key);
  // A deep path is shown by its first and last steps only.
  const cut = keys.length > 12;
  const shown = cut ? [...keys.slice(0, 6), '…', ...keys.slice(-6)] : keys;
  let out = '$';
  for (let i = shown.length - 1; i >= 0; i--) {
    const k = shown[i]!;
    out += cut && i === 6 ? '…' : typeof k === 'number' ? `[${k}]` : `.${k}`;
  }
  return out;
}

/**
 * Throws `invalid_argument` unless `value` round-trips through JSON unchanged: no
 * functions, symbols, BigInt, `undefined` array items, non-finite numbers, cycles, or
 * objects other than plain objects and arrays (a `Date` inside JSON would come back as a
 * string), and at most `MAX_JSON_DEPTH` (512) levels of nesting. `undefined` object
 * properties are allowed and dropped, as JSON.stringify does. Keys such as `__proto__`
 * are ordinary data. The walk uses an explicit stack, so no input can overflow the call
 * stack.
 */
export function assertJsonValue(
  errors: ErrorFactory,
  value: unknown,
  what: string,
): asserts value is JsonValue {
  if (value === undefined) throw errors.invalid(`${what} is undefined`);
  // Containers on the current path (for cycle detection): an object is "open" from when
  // its children are pushed until the marker frame after them is popped.
  const open = new Set<object>();
  const stack: (JsonFrame | { close: object })[] = [
    { v: value, depth: 0, parent: undefined, key: '' },
  ];
  while (stack.length > 0) {
    const top = stack.pop()!;
    if ('close' in top) {
      open.delete(top.close);
      continue;
    }
    const v = top.v;
    switch (typeof v) {
      case 'string':
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(v))
          throw errors.invalid(`${what}: ${jsonPathOf(top)} is ${v}, which JSON cannot hold`);
        continue;
      case 'object': {
        if (v === null) continue;
        if (open.has(v)) throw errors.invalid(`${what}: ${jsonPathOf(top)} is a cycle`);
        if (top.depth >= MAX_JSON_DEPTH) {
          throw errors.invalid(
            `${what}: ${jsonPathOf(top)} is nested deeper than ${MAX_JSON_DEPTH} levels`,
          );
        }
        const isArray = Array.isArray(v);
        if (!isArray) {
          const proto = Object.getPrototypeOf(v);
          if (proto !== Object.prototype && proto !== null) {
            const name = (v as { constructor?: { name?: string } }).constructor?.name ?? 'object';
            throw errors.invalid(
              `${what}: ${jsonPathOf(top)} is a ${name}, not a plain JSON object`,
            );
          }
        }
        open.add(v);
        stack.push({ close: v });
        if (isArray) {
          const arr = v as unknown[];
          for (let i = arr.length - 1; i >= 0; i--) {
            if (arr[i] === undefined)
              throw errors.invalid(`${what}: ${jsonPathOf(top)}[${i}] is undefined`);
            stack.push({ v: arr[i], depth: top.depth + 1, parent: top, key: i });
          }
        } else {
          const entries = Object.entries(v);
          for (let i = entries.length - 1; i >= 0; i--) {
            const [k, item] = entries[i]!;
            if (item === undefined) continue;
            stack.push({ v: item, depth: top.depth + 1, parent: top, key: k });
          }
        }
        continue;
      }
      default:
        throw errors.invalid(
          `${what}: ${jsonPathOf(top)} is a ${typeof v}, which JSON cannot hold`,
        );
    }
  }
}

/** Byte length of the UTF-8 JSON encoding of `value`. */
export function jsonByteLength(value: JsonValue): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}
