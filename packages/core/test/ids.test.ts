import { describe, expect, it } from 'vitest';
import { isValidId, MAX_ID_LENGTH, newSessionId } from '../src/ids.js';
import { newSession } from '../src/session.js';

const CROCKFORD = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('newSessionId', () => {
  it('makes valid 26-character Crockford base32 ids', () => {
    const id = newSessionId();
    expect(id).toHaveLength(26);
    expect(id).toMatch(CROCKFORD);
    expect(isValidId(id)).toBe(true);
    expect(MAX_ID_LENGTH).toBe(128);
  });

  it('stays increasing across many ids with the real clock', () => {
    // Runs before the tests below move this process's id clock into the future.
    const ids = Array.from({ length: 2000 }, () => newSessionId());
    for (let i = 1; i < ids.length; i++) expect(ids[i - 1]! < ids[i]!).toBe(true);
  });

  it('encodes the time in the first 10 characters, so later ids sort later', () => {
    const a = newSessionId(Date.UTC(2020, 0, 1));
    const b = newSessionId(Date.UTC(2030, 0, 1));
    expect(a.slice(0, 10) < b.slice(0, 10)).toBe(true);
    expect(a < b).toBe(true);
    // 2030-01-01 = 1893456000000 ms; decode the prefix back.
    const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    const decoded = Array.from(b.slice(0, 10)).reduce((n, c) => n * 32 + alphabet.indexOf(c), 0);
    expect(decoded).toBe(Date.UTC(2030, 0, 1));
  });

  it('makes 10 000 unique, strictly increasing ids within one millisecond', () => {
    const now = Date.UTC(2040, 5, 1); // later than anything made before in this process
    const ids = Array.from({ length: 10_000 }, () => newSessionId(now));
    expect(new Set(ids).size).toBe(10_000);
    for (let i = 1; i < ids.length; i++) expect(ids[i - 1]! < ids[i]!).toBe(true);
    for (const id of ids) expect(id).toMatch(CROCKFORD);
  });

  it('stays increasing when the clock steps back', () => {
    const later = newSessionId(Date.UTC(2041, 0, 1));
    const earlier = newSessionId(Date.UTC(2001, 0, 1));
    expect(later < earlier).toBe(true);
  });
});

describe('newSession', () => {
  it('gives a fresh id unless one is given, and keeps the other fields', () => {
    const s = newSession({ folder: '/w', title: 't' });
    expect(isValidId(s.id)).toBe(true);
    expect(s).toMatchObject({ folder: '/w', title: 't' });
    expect(newSession({ id: 'mine' }).id).toBe('mine');
    expect(newSession().id).not.toBe(newSession().id);
  });
});
