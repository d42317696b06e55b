import { randomBytes } from 'node:crypto';

/** Longest id any store accepts. */
export const MAX_ID_LENGTH = 128;

// Letters, digits, dot, underscore and dash, not starting with a dot: safe as a file
// name, an S3 key segment, a Redis key part and a SQL literal.
const ID_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** True for a valid session id: 1–128 chars of `[A-Za-z0-9._-]`, not starting with `.`. */
export function isValidId(id: unknown): id is string {
  return typeof id === 'string' && ID_PATTERN.test(id);
}

// Crockford base32: sorts in ASCII order like the numbers it encodes.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  let rest = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

function freshRandom(): number[] {
  const bytes = randomBytes(16);
  return Array.from(bytes, (b) => b % 32);
}

function increment(digits: number[]): number[] {
  const next = digits.slice();
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i]! += 1;
      return next;
    }
    next[i] = 0;
  }
  return freshRandom();
}

/**
 * A new session id: 26 characters, time-sortable (ids made later sort later, also within
 * one millisecond of one process), 80 random bits. Example: `01JH3K8Q0M6W4V9F2S7XG1TZ5N`.
 */
export function newSessionId(now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
  } else {
    lastTime = now;
    lastRandom = freshRandom();
  }
  return encodeTime(lastTime) + lastRandom.map((d) => ALPHABET[d]).join('');
}
