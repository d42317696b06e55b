// Timestamps read back from PostgreSQL as Dates, never `Invalid Date`.
import { errors } from './errors.js';

// A row_to_json timestamp: ISO 8601 in the session's TimeZone, whose offset may carry
// seconds (`+00:19:32` for Amsterdam before 1937), with years of 4 or more digits and a
// " BC" suffix before year 1 — all of which `Date` cannot parse by itself.
const JSON_TIMESTAMP =
  /^(\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:Z|([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?)?( BC)?$/;

/**
 * A Date from a driver value or from a row_to_json timestamp string, in any TimeZone and
 * for any year PostgreSQL can hold that `Date` can (core keeps new dates within years
 * 1–9999; rows written by other tools may hold others). Throws `corrupt` (naming the
 * session `id`) instead of returning an invalid Date.
 */
export function toDate(id: string, v: Date | string): Date {
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) throw errors.corrupt(id, 'a stored timestamp is out of range');
    return v;
  }
  const m = JSON_TIMESTAMP.exec(v);
  if (!m) throw errors.corrupt(id, `a stored timestamp cannot be read (${v.slice(0, 40)})`);
  let year = Number(m[1]);
  if (m[12] !== undefined) year = 1 - year; // 1 BC is year 0 (ISO 8601's astronomical years)
  const ms = m[7] === undefined ? 0 : Number(`${m[7]}00`.slice(0, 3));
  const d = new Date(0);
  d.setUTCFullYear(year, Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), ms);
  let t = d.getTime();
  if (m[8] !== undefined) {
    const offsetMs = (Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60 + Number(m[11] ?? 0)) * 1000;
    t = m[8] === '+' ? t - offsetMs : t + offsetMs;
  }
  const out = new Date(t);
  if (Number.isNaN(out.getTime())) {
    throw errors.corrupt(id, `a stored timestamp is outside the range of Date (${v.slice(0, 40)})`);
  }
  return out;
}
