import {
  type ErrorCode,
  isSessionKitError,
  type Message,
  type Session,
  type SessionInput,
  type SessionKitError,
  type SessionSummary,
  type Store,
} from '@sessionkit/core';
import { expect } from 'vitest';
import type { TestContext } from '../harness.js';

/** A user or assistant message with plain text. */
export function msg(role: 'user' | 'assistant', text: string): Message {
  return { role, content: text };
}

/** The two messages of turn `i`, tagged so a test can check order and uniqueness. */
export function turn(i: number, tag = 't'): Message[] {
  return [msg('user', `${tag} question ${i}`), msg('assistant', `${tag} answer ${i}`)];
}

/** `n` turns (2n messages). */
export function turns(n: number, tag = 't'): Message[] {
  return Array.from({ length: n }, (_, i) => turn(i, tag)).flat();
}

/** Lower case without spaces or punctuation: "chat key", "chatKey" and "chat_key" agree. */
export function normalizedWords(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Awaits `promise`, asserts it rejects with a `SessionKitError` of `code`, returns the error. */
export async function expectCode(
  promise: Promise<unknown>,
  code: ErrorCode,
): Promise<SessionKitError> {
  let result: unknown;
  try {
    result = await promise;
  } catch (e) {
    if (!isSessionKitError(e, code)) {
      const got = isSessionKitError(e) ? `SessionKitError(${e.code}): ${e.message}` : String(e);
      throw new Error(`expected a SessionKitError with code "${code}", got ${got}`);
    }
    expect(e.message).toMatch(/^\[sessionkit\/[a-z0-9-]+\] /);
    return e;
  }
  throw new Error(
    `expected a SessionKitError with code "${code}", but the call succeeded with ${preview(result)}`,
  );
}

function preview(v: unknown): string {
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 200 ? `${s.slice(0, 200)}…` : s;
  } catch {
    return String(v);
  }
}

/** Creates a session with a fresh id (and the test's folder unless given). */
export function createSession(
  ctx: TestContext,
  fields: Partial<SessionInput> = {},
  store: Store = ctx.store,
): Promise<Session> {
  return store.create({ id: ctx.id(), ...fields });
}

/** Every summary of `folder`, through keyset pages, newest first. */
export async function listAll(
  store: Store,
  folder: string,
  extra: { includeArchived?: boolean } = {},
): Promise<SessionSummary[]> {
  const out: SessionSummary[] = [];
  let startAfter: { updatedAt: Date; id: string } | undefined;
  for (;;) {
    const page = await store.list({
      folder,
      limit: 1000,
      ...extra,
      ...(startAfter ? { startAfter } : {}),
    });
    out.push(...page);
    if (page.length < 1000) return out;
    const last = page[page.length - 1]!;
    startAfter = { updatedAt: last.updatedAt, id: last.id };
  }
}

/**
 * A search of `folder`: the ids of the sessions `query` finds there, sorted (one page of the
 * store's default size, enough for a test's few sessions).
 */
export function searchIn(store: Store, folder: string): (query: string) => Promise<string[]> {
  return async (query) => (await store.list({ folder, query })).map((s) => s.id).sort();
}

/** Yields to the event loop, so racing writers really interleave. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Milliseconds later, for tests that need distinct timestamps. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `fns` started together; returns their settled results. */
export function race<T>(fns: (() => Promise<T>)[]): Promise<PromiseSettledResult<T>[]> {
  return Promise.allSettled(fns.map((f) => Promise.resolve().then(f)));
}

/** Counts rejections by SessionKitError code ("ok" for fulfilled, "other" for foreign errors). */
export function tally(results: PromiseSettledResult<unknown>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    const key =
      r.status === 'fulfilled'
        ? 'ok'
        : isSessionKitError(r.reason)
          ? r.reason.code
          : `other: ${String(r.reason)}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/**
 * Asserts the listing invariant for `id`: the store's summary of the session equals the
 * loaded session without its messages, plus `messageCount`. The session is found through
 * `list` with its own folder (archived included) and keyset-paged, so a large folder is
 * fine. Returns the loaded session.
 */
export async function expectListedAsLoaded(store: Store, id: string): Promise<Session> {
  const loaded = await store.load(id);
  const { messages, ...rest } = loaded;
  const expected = { ...rest, messageCount: messages.length };
  const summaries = await listAll(store, loaded.folder, { includeArchived: true });
  const summary = summaries.find((s) => s.id === id);
  expect(summary, `session "${id}" is missing from list()`).toBeDefined();
  expect(summary, `the summary of "${id}" differs from load()`).toEqual(expected);
  return loaded;
}

/**
 * Starts `work` without waiting for it: `done` turns true when it ends (either way), and
 * `finished` settles with it. A rejection is never unhandled, also when the test fails
 * first and the work then meets a closed store; await `finished` to see it.
 */
export function inBackground(work: () => Promise<void>): {
  readonly done: boolean;
  finished: Promise<void>;
} {
  const state = { done: false, finished: Promise.resolve() };
  state.finished = work().finally(() => {
    state.done = true;
  });
  state.finished.catch(() => {});
  return state;
}
