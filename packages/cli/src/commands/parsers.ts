// Option value parsers: a bad value is a usage error (exit 2) reported by commander.
import { InvalidArgumentError } from 'commander';

/** A parser for an integer option in `[min, max]`. */
export function integerIn(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `expected an integer ≥ ${min}, got "${raw}"`
          : `expected an integer from ${min} to ${max}, got "${raw}"`,
      );
    }
    return n;
  };
}

/** Parses an ISO date (`2026-11-29`, `2026-11-29T13:23:35Z`). */
export function isoDate(raw: string): Date {
  const date = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(date.getTime())) {
    throw new InvalidArgumentError(
      `expected an ISO date such as 2026-11-29T13:00:00Z, got "${raw}"`,
    );
  }
  return date;
}

/** A parser that accepts one of `choices`. */
export function oneOf<T extends string>(choices: readonly T[]) {
  return (raw: string): T => {
    if (!(choices as readonly string[]).includes(raw)) {
      throw new InvalidArgumentError(`expected one of ${choices.join(', ')}, got "${raw}"`);
    }
    return raw as T;
  };
}

/** A keyset cursor as `list` prints it: `<updatedAt ISO>/<id>`. */
export interface Cursor {
  updatedAt: Date;
  id: string;
}

/** Formats a cursor for `--cursor` (ids never contain "/"). */
export function formatCursor(cursor: Cursor): string {
  return `${cursor.updatedAt.toISOString()}/${cursor.id}`;
}

/** Parses `--cursor` as printed by `list` ("" before the slash is not allowed). */
export function parseCursor(raw: string): Cursor {
  const slash = raw.indexOf('/');
  const updatedAt = new Date(raw.slice(0, slash));
  if (slash < 0 || Number.isNaN(updatedAt.getTime())) {
    throw new InvalidArgumentError(
      `expected a cursor as printed by list (<updatedAt>/<id>), got "${raw}"`,
    );
  }
  return { updatedAt, id: raw.slice(slash + 1) };
}
