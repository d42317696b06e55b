// Input is read once: every value a store keeps is copied from the caller's object in one
// pass that also validates it, so a getter that throws, a proxy, or a value that changes
// between two reads can never make a store keep something other than what it checked.
import type { ErrorFactory } from '../errors.js';
import { MAX_JSON_DEPTH } from '../json-value.js';
import { setOwn } from '../session.js';

/** A container still being filled: where the copy of the value at `src` goes. */
interface CopyFrame {
  src: object;
  out: unknown[] | Record<string, unknown>;
  depth: number;
  parent: CopyFrame | undefined;
  key: string | number;
}

/** The path of `key` under `frame` (`$.a[1].b`), built only for an error message. */
function pathOf(frame: CopyFrame | undefined, key?: string | number): string {
  const keys: (string | number)[] = key === undefined ? [] : [key];
  for (let f = frame; f?.parent; f = f.parent) keys.push(f.key);
  const cut = keys.length > 12;
  const shown = cut ? [...keys.slice(0, 6), '…', ...keys.slice(-6)] : keys;
  let out = '$';
  for (let i = shown.length - 1; i >= 0; i--) {
    const k = shown[i] as string | number;
    out += cut && i === 6 ? '…' : typeof k === 'number' ? `[${k}]` : `.${k}`;
  }
  return out;
}

/**
 * The own enumerable `[key, value]` pairs of `obj`, each value read exactly once. A getter
 * or proxy trap that throws becomes `invalid_argument` naming `what`.
 */
export function readEntries(errors: ErrorFactory, obj: object, what: string): [string, unknown][] {
  const keys = readKeys(errors, obj, what);
  const out: [string, unknown][] = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out[i] = [key, readValue(errors, obj, key, what)];
  }
  return out;
}

/** `Object.keys(obj)`; a throwing proxy trap becomes `invalid_argument`. */
export function readKeys(errors: ErrorFactory, obj: object, what: string): string[] {
  try {
    return Object.keys(obj);
  } catch (e) {
    throw errors.invalid(`${what}: its keys cannot be read (${describeThrown(e)})`);
  }
}

/** `obj[key]`, read once; a throwing getter or trap becomes `invalid_argument`. */
export function readValue(errors: ErrorFactory, obj: object, key: string | number, what: string) {
  try {
    return (obj as Record<string | number, unknown>)[key];
  } catch (e) {
    throw errors.invalid(`${what}: reading "${String(key)}" threw (${describeThrown(e)})`);
  }
}

function describeThrown(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** A problem with one value inside a JSON copy, or undefined for a primitive that JSON holds. */
function primitiveProblem(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(v) ? undefined : `is ${v}, which JSON cannot hold`;
    default:
      return `is a ${typeof v}, which JSON cannot hold`;
  }
}

/**
 * What kind of object `v` is: `"array"`, `"plain"` (prototype `Object.prototype` or
 * `null`), or its class name. A revoked proxy, or one whose traps throw, is
 * `invalid_argument` naming `what`.
 */
export function objectKind(errors: ErrorFactory, v: object, what: string): string {
  try {
    if (Array.isArray(v)) return 'array';
    const proto = Object.getPrototypeOf(v);
    if (proto === Object.prototype || proto === null) return 'plain';
    const ctor = (proto as { constructor?: { name?: unknown } }).constructor;
    return typeof ctor?.name === 'string' && ctor.name !== '' ? ctor.name : 'object';
  } catch (e) {
    throw errors.invalid(`${what} cannot be inspected (${describeThrown(e)})`);
  }
}

/**
 * A validated deep copy of a JSON value, made in one pass that reads every property once:
 * the copy is what a serialising backend would return (`undefined` object properties
 * dropped, `-0` as `0`, keys such as `__proto__` as ordinary own keys). Throws
 * `invalid_argument` naming `what` and the path for anything JSON cannot hold unchanged:
 * functions, symbols, BigInt, `undefined` (at the top or as an array item), non-finite
 * numbers, cycles, objects other than plain objects and arrays, nesting deeper than
 * `MAX_JSON_DEPTH` (512), and getters or proxies that throw. Iterative: no input can
 * overflow the call stack.
 */
export function copyJson<T = unknown>(errors: ErrorFactory, value: unknown, what: string): T {
  if (value === undefined) throw errors.invalid(`${what} is undefined`);
  if (typeof value !== 'object' || value === null) {
    if (value === null) return value as T;
    const problem = primitiveProblem(value);
    if (problem !== undefined) throw errors.invalid(`${what}: $ ${problem}`);
    return (value === 0 ? 0 : value) as T;
  }
  // Containers on the path being copied, for cycle detection: a container is open from when
  // it is copied until the marker after its children is popped (a value appearing twice in
  // different places is a DAG, which JSON copies twice, not a cycle).
  const open = new Set<object>();
  const first = containerFrame(errors, value, 0, undefined, '', what);
  const stack: (CopyFrame | { close: object })[] = [first];
  while (stack.length > 0) {
    const top = stack.pop() as CopyFrame | { close: object };
    if ('close' in top) {
      open.delete(top.close);
      continue;
    }
    if (open.has(top.src)) {
      throw errors.invalid(`${what}: ${pathOf(top.parent, top.key)} is a cycle`);
    }
    open.add(top.src);
    stack.push({ close: top.src });
    copyChildren(errors, top, what, stack);
  }
  return first.out as T;
}

/** The frame of a container to copy, with its (still empty) copy; checks depth and kind. */
function containerFrame(
  errors: ErrorFactory,
  v: object,
  depth: number,
  parent: CopyFrame | undefined,
  key: string | number,
  what: string,
): CopyFrame {
  if (depth >= MAX_JSON_DEPTH) {
    throw errors.invalid(
      `${what}: ${pathOf(parent, key)} is nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  }
  const kind = objectKind(errors, v, `${what}: ${pathOf(parent, key)}`);
  if (kind !== 'array' && kind !== 'plain') {
    throw errors.invalid(`${what}: ${pathOf(parent, key)} is a ${kind}, not a plain JSON object`);
  }
  return { src: v, out: kind === 'array' ? [] : {}, depth, parent, key };
}

/** Copies the children of `frame`: primitives at once, containers pushed for later. */
function copyChildren(
  errors: ErrorFactory,
  frame: CopyFrame,
  what: string,
  stack: (CopyFrame | { close: object })[],
): void {
  const isArray = Array.isArray(frame.out);
  const entries: [string | number, unknown][] = isArray
    ? arrayItems(errors, frame.src as unknown[], what, frame)
    : readEntries(errors, frame.src, `${what}: ${pathOf(frame)}`);
  const out = frame.out as Record<string | number, unknown>;
  for (const [k, item] of entries) {
    if (item === undefined) {
      if (isArray) throw errors.invalid(`${what}: ${pathOf(frame, k)} is undefined`);
      continue;
    }
    let copied: unknown;
    if (typeof item === 'object' && item !== null) {
      const child = containerFrame(errors, item, frame.depth + 1, frame, k, what);
      stack.push(child);
      copied = child.out;
    } else if (item === null) {
      copied = null;
    } else {
      const problem = primitiveProblem(item);
      if (problem !== undefined) throw errors.invalid(`${what}: ${pathOf(frame, k)} ${problem}`);
      copied = item === 0 ? 0 : item;
    }
    if (k === '__proto__') setOwn(out as Record<string, unknown>, k, copied);
    else out[k] = copied;
  }
}

function arrayItems(
  errors: ErrorFactory,
  arr: unknown[],
  what: string,
  frame: CopyFrame,
): [number, unknown][] {
  const length = readValue(errors, arr, 'length', `${what}: ${pathOf(frame)}`) as number;
  const out: [number, unknown][] = new Array(length);
  for (let i = 0; i < length; i++)
    out[i] = [i, readValue(errors, arr, i, `${what}: ${pathOf(frame)}`)];
  return out;
}
