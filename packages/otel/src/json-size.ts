// The size of a value's JSON without running any of its code. A store reads its input once
// (getters and proxies see one read), so the wrapper must never read it again through them:
// this walk looks at data properties only, through their descriptors, and gives up on
// anything else.
import { types } from 'node:util';

/** Values (strings, numbers, containers …) counted at most: beyond, the size is unknown. */
export const MAX_SIZED_VALUES = 100_000;

/** Own enumerable data properties of `object` whose values JSON keeps, or `undefined`. */
function dataEntries(object: object): [string, unknown][] | undefined {
  const entries: [string, unknown][] = [];
  for (const key of Object.keys(object)) {
    const d = Object.getOwnPropertyDescriptor(object, key);
    if (!d || !('value' in d)) return undefined;
    if (d.value !== undefined) entries.push([key, d.value]);
  }
  return entries;
}

/** Bytes of an array's or plain object's brackets and separators, and its members to walk. */
function containerOf(v: object): { bytes: number; members: unknown[] } | undefined {
  if (types.isProxy(v)) return undefined;
  if (Array.isArray(v)) {
    const members: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      const d = Object.getOwnPropertyDescriptor(v, i);
      if (!d || !('value' in d) || d.value === undefined) return undefined;
      members.push(d.value);
    }
    return { bytes: 2 + Math.max(0, members.length - 1), members };
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const entries = dataEntries(v);
  if (!entries) return undefined;
  let bytes = 2 + Math.max(0, entries.length - 1);
  for (const [key] of entries) bytes += Buffer.byteLength(JSON.stringify(key)) + 1;
  return { bytes, members: entries.map(([, value]) => value) };
}

/**
 * UTF-8 bytes of `JSON.stringify(value)`, counted without calling a getter, a proxy trap
 * or `toJSON`; `undefined` when that cannot be done (an accessor property, a proxy, an
 * object that is not plain, a value JSON cannot hold, more than `MAX_SIZED_VALUES`
 * values). Uses an explicit stack: no input can overflow the call stack.
 */
export function jsonSizeOf(value: unknown): number | undefined {
  let bytes = 0;
  let counted = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (++counted > MAX_SIZED_VALUES) return undefined;
    if (typeof v === 'string') bytes += Buffer.byteLength(JSON.stringify(v));
    else if (typeof v === 'number' && Number.isFinite(v)) bytes += String(v).length;
    else if (typeof v === 'boolean') bytes += v ? 4 : 5;
    else if (v === null) bytes += 4;
    else if (typeof v === 'object') {
      const container = containerOf(v);
      if (!container) return undefined;
      bytes += container.bytes;
      for (const member of container.members) stack.push(member);
    } else return undefined;
  }
  return bytes;
}
