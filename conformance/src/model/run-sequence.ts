// Runs one random operation sequence on a store and on the reference model, comparing
// every result and every error code; at the end every session is compared whole.
import {
  type Capability,
  detectCapabilities,
  type FullStore,
  isSessionKitError,
  type Message,
  type MessageWindowQuery,
  type Session,
} from '@sessionkit/core';
import { errorsFor, prepareCreate } from '@sessionkit/core/adapter';
import { expect } from 'vitest';
import { type Operation, ROUTER_KEYS } from './operations.js';
import {
  type ModelCommit,
  type ModelSession,
  type Outcome,
  ReferenceModel,
} from './reference-model.js';

const NEEDS: Partial<Record<Operation['op'], Capability>> = {
  commit: 'Committer',
  branch: 'Brancher',
  clone: 'Brancher',
  merge: 'Brancher',
  window: 'HistoryReader',
  saveStatus: 'RuntimeStatusStore',
  loadStatus: 'RuntimeStatusStore',
  event: 'EventLog',
  events: 'EventLog',
  bind: 'SessionRouter',
  unbind: 'SessionRouter',
  follow: 'SessionRouter',
  resolve: 'SessionRouter',
  touch: 'SessionRouter',
  recent: 'SessionRouter',
  enforceMax: 'Pruner',
};

const STATUSES = ['active', 'done'];

async function attempt<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: await fn() };
  } catch (e) {
    if (isSessionKitError(e)) return { error: e.code };
    throw e;
  }
}

/** Both outcomes agree on success or on the error code; returns the store's value. */
function agree<T>(what: string, actual: Outcome<T>, expected: Outcome<unknown>): T | undefined {
  const got = 'ok' in actual ? 'ok' : actual.error;
  const want = 'ok' in expected ? 'ok' : expected.error;
  expect(got, `${what}: the store answered ${got}, the model ${want}`).toBe(want);
  return 'ok' in actual ? actual.ok : undefined;
}

/** Runs `ops` on `store` (fresh, empty) against a fresh model. Throws on the first mismatch. */
export async function runSequence(
  store: FullStore,
  ops: Operation[],
  runId: string,
): Promise<void> {
  const run = new SequenceRun(store, runId);
  for (const [i, op] of ops.entries()) {
    const needs = NEEDS[op.op];
    if (needs && !run.caps.has(needs)) continue;
    try {
      await run.step(op);
    } catch (e) {
      const detail = e instanceof Error ? e.message : String(e);
      throw new Error(`operation ${i} ${JSON.stringify(op)}: ${detail}`);
    }
  }
  await run.compareAll();
}

class SequenceRun {
  readonly model = new ReferenceModel();
  readonly caps: Set<Capability>;
  readonly folders: string[];

  constructor(
    readonly store: FullStore,
    readonly runId: string,
  ) {
    this.caps = new Set(detectCapabilities(store));
    this.folders = [`/model/${runId}/a`, `/model/${runId}/b`];
  }

  /** The `k`-th newest session id (creation order), or a missing one past them. */
  id(k: number, among?: (s: ModelSession) => boolean): string {
    const all = [...this.model.sessions.values()];
    const some = among ? all.filter(among) : all;
    const ids = (some.length > 0 ? some : all).map((s) => s.id);
    const i = k % (ids.length + 1);
    return i === ids.length ? `${this.runId}-missing` : ids[ids.length - 1 - i]!;
  }

  /** Adopts the store's timestamps for `id` after a write; `updatedAt` must move forward. */
  adopt(id: string, s: { updatedAt: Date; createdAt?: Date }, fresh: boolean): void {
    const m = this.model.sessions.get(id)!;
    if (!fresh) {
      expect(s.updatedAt.getTime(), `updatedAt of "${id}" must move forward`).toBeGreaterThan(
        m.updatedAt.getTime(),
      );
    }
    m.updatedAt = new Date(s.updatedAt.getTime());
    if (s.createdAt) m.createdAt = new Date(s.createdAt.getTime());
  }

  expectView(what: string, actual: Session | undefined, id: string): void {
    const m = this.model.sessions.get(id);
    expect(actual, `${what}: no session`).toBeDefined();
    if (m) expect(actual, `${what} differs from the model`).toEqual(this.model.view(m));
  }

  async step(op: Operation): Promise<void> {
    const s = this.store;
    const m = this.model;
    switch (op.op) {
      case 'create':
        return this.create(op);
      case 'load': {
        const id = this.id(op.k);
        const got = agree('load', await attempt(() => s.load(id)), m.get(id));
        if (got) this.expectView('load', got, id);
        return;
      }
      case 'save':
        return this.save(op);
      case 'commit':
        return this.commit(op);
      case 'delete': {
        const id = this.id(op.k);
        agree('delete', await attempt(() => s.delete(id)), m.delete(id));
        return;
      }
      case 'list':
        return this.list(op);
      case 'branch':
        return this.branch(op);
      case 'clone': {
        const id = this.id(op.k);
        const got = agree('clone', await attempt(() => s.clone(id)), m.get(id));
        if (!got) return;
        m.clone(id, got.id);
        this.adopt(got.id, got, true);
        this.expectView('clone', got, got.id);
        return;
      }
      case 'merge': {
        const id = this.id(op.k, (x) => x.parentId !== undefined);
        const expected = m.merge(id);
        const got = agree('merge', await attempt(() => s.merge(id)), expected);
        if (!got || !('ok' in expected)) return;
        this.adopt(got.id, got, false);
        this.expectView('merge', got, got.id);
        return;
      }
      case 'window': {
        const id = this.id(op.k);
        const w: MessageWindowQuery =
          op.last === null ? { offset: op.offset, limit: op.limit } : { last: op.last };
        const expected = m.window(id, w);
        const got = agree('loadMessages', await attempt(() => s.loadMessages(id, w)), expected);
        if (got && 'ok' in expected)
          expect(got, `loadMessages(${JSON.stringify(w)})`).toEqual(expected.ok);
        return;
      }
      default:
        return this.sideStep(op);
    }
  }

  /** `list` with the operation's filters, compared with the model's page. */
  async list(op: Extract<Operation, { op: 'list' }>): Promise<void> {
    const s = this.store;
    const m = this.model;
    const options = {
      folder: this.folders[op.folder]!,
      ...(op.status === null ? {} : { status: STATUSES[op.status]! }),
      ...(op.query === null ? {} : { query: op.query }),
      includeArchived: op.includeArchived,
      oldestFirst: op.oldestFirst,
      limit: op.limit,
      offset: op.offset,
    };
    const expected = m.list(options);
    const got = await s.list(options);
    expect(got, `list(${JSON.stringify(options)})`).toEqual(expected);
  }

  /** `branch` at a point (or the end), compared with the model; the new session is adopted. */
  async branch(op: Extract<Operation, { op: 'branch' }>): Promise<void> {
    const s = this.store;
    const m = this.model;
    const id = this.id(op.k);
    const expected = m.get(id);
    const at = op.at === 'end' ? ('ok' in expected ? expected.ok.messages.length : 0) : op.at;
    const out = await attempt(() => s.branch(id, at));
    const wanted: Outcome<unknown> =
      'ok' in expected && at > expected.ok.messages.length
        ? { error: 'invalid_argument' }
        : expected;
    const got = agree('branch', out, wanted);
    if (!got) return;
    m.branch(id, at, got.id);
    this.adopt(got.id, got, true);
    this.expectView('branch', got, got.id);
  }

  /** Runtime status, events, router and pruning. */
  async sideStep(op: Operation): Promise<void> {
    const s = this.store;
    const m = this.model;
    switch (op.op) {
      case 'saveStatus': {
        const id = this.id(op.k);
        const value = { step: op.value };
        const expected = m.get(id);
        agree('saveRuntimeStatus', await attempt(() => s.saveRuntimeStatus(id, value)), expected);
        if ('ok' in expected) expected.ok.runtimeStatus = value;
        return;
      }
      case 'loadStatus': {
        const id = this.id(op.k);
        const expected = m.get(id);
        const got = agree(
          'loadRuntimeStatus',
          await attempt(() => s.loadRuntimeStatus(id)),
          expected,
        );
        if ('ok' in expected) expect(got ?? null).toEqual(expected.ok.runtimeStatus);
        return;
      }
      case 'event': {
        const id = this.id(op.k);
        const expected = m.get(id);
        const got = agree(
          'append',
          await attempt(() => s.append(id, op.type, { t: op.type })),
          expected,
        );
        if (!got || !('ok' in expected)) return;
        const session = expected.ok;
        const event = {
          sequence: session.events.length + 1,
          revision: session.revision,
          type: op.type,
          payload: { t: op.type },
          at: got.at,
        };
        expect(got, 'append').toEqual(event);
        session.events.push(event);
        return;
      }
      case 'events': {
        const id = this.id(op.k);
        const expected = m.get(id);
        const query = {
          afterSequence: op.after,
          ...(op.limit === null ? {} : { limit: op.limit }),
        };
        const got = agree('events', await attempt(() => s.events(id, query)), expected);
        if (!got || !('ok' in expected)) return;
        const want = expected.ok.events.filter((e) => e.sequence > op.after);
        expect(got, `events(${JSON.stringify(query)})`).toEqual(
          op.limit === null ? want : want.slice(0, op.limit),
        );
        return;
      }
      default:
        return this.routerStep(op);
    }
  }

  async routerStep(op: Operation): Promise<void> {
    const s = this.store;
    const m = this.model;
    switch (op.op) {
      case 'bind': {
        const key = ROUTER_KEYS[op.key]!;
        const id = this.id(op.k);
        const expected = m.get(id);
        agree('bind', await attempt(() => s.bind(...key, id)), expected);
        if ('ok' in expected) m.bindings.set(JSON.stringify(key), { sessionId: id, key });
        return;
      }
      case 'unbind': {
        const key = ROUTER_KEYS[op.key]!;
        await s.unbind(...key);
        m.bindings.delete(JSON.stringify(key));
        return;
      }
      case 'follow': {
        const [channel, chatKey] = ROUTER_KEYS[op.key]!;
        const target =
          op.target === 'tui' ? 'tui' : op.target === 'clear' ? '' : this.id(op.target);
        await s.follow(channel, chatKey, target);
        const fk = JSON.stringify([channel, chatKey]);
        if (target === '') m.follows.delete(fk);
        else m.follows.set(fk, target);
        return;
      }
      case 'resolve': {
        const key = ROUTER_KEYS[op.key]!;
        const live = op.live === null ? '' : this.id(op.live);
        expect(await s.resolve(...key, live), `resolve(${JSON.stringify([...key, live])})`).toBe(
          m.resolve(key, live),
        );
        return;
      }
      case 'touch':
        await s.touch(...ROUTER_KEYS[op.key]!);
        return;
      case 'recent': {
        const rows = await s.recent(1000);
        const got = rows.map((r) => JSON.stringify([r.sessionId, r.channel, r.chatKey, r.thread]));
        const want = [...m.bindings.values()].map((b) => JSON.stringify([b.sessionId, ...b.key]));
        expect(got.sort(), 'recent(): the bindings').toEqual(want.sort());
        for (let i = 1; i < rows.length; i++) {
          expect(rows[i - 1]!.updatedAt.getTime()).toBeGreaterThanOrEqual(
            rows[i]!.updatedAt.getTime(),
          );
        }
        return;
      }
      case 'enforceMax':
        expect(await s.enforceMax(op.max), `enforceMax(${op.max})`).toBe(m.enforceMax(op.max));
        return;
      default:
        throw new Error(`unknown operation ${JSON.stringify(op)}`);
    }
  }

  async create(op: Extract<Operation, { op: 'create' }>): Promise<void> {
    const id = `${this.runId}-s${op.slot}`;
    const parentId = op.parent === null ? undefined : this.id(op.parent);
    const input = {
      id,
      title: op.title,
      folder: this.folders[op.folder]!,
      status: STATUSES[op.status]!,
      messages: op.messages as Message[],
      tokenCount: op.tokenCount,
      ...(parentId === undefined || parentId === id ? {} : { parentId, branchedAtTurn: op.at }),
    };
    const exists = this.model.sessions.has(id);
    const got = agree(
      'create',
      await attempt(() => this.store.create(input)),
      exists ? { error: 'exists' } : { ok: true },
    );
    if (!got) return;
    const session: ModelSession = {
      ...input,
      model: '',
      provider: '',
      costUsd: 0,
      turnCount: 0,
      metadata: {},
      createdAt: got.createdAt,
      updatedAt: got.updatedAt,
      revision: 1,
      rewrites: 0,
      runtimeStatus: null,
      events: [],
    };
    this.model.create(session);
    expect(got.updatedAt.getTime()).toBe(got.createdAt.getTime());
    this.expectView('create', got, id);
  }

  async save(op: Extract<Operation, { op: 'save' }>): Promise<void> {
    const id = this.id(op.k);
    const stored = this.model.sessions.get(id);
    const base = stored ? (this.model.view(stored) as unknown as Session) : missingSession(id);
    const messages: Message[] =
      op.messages === 'same'
        ? base.messages
        : op.messages === 'extend'
          ? [...base.messages, { role: 'user', content: 'saved' }]
          : [{ role: 'assistant', content: 'other' }];
    const revision = op.stale ? base.revision + 7 : base.revision;
    const next: Session = {
      ...base,
      title: op.title,
      folder: this.folders[op.folder]!,
      messages,
      revision,
    };
    if (!op.keepState) delete next.state;
    const expected = this.model.save(id, revision, next as unknown as ModelSession);
    const got = agree('save', await attempt(() => this.store.save(next)), expected);
    if (!got) return;
    this.adopt(id, got, false);
    this.expectView('save', got, id);
  }

  async commit(op: Extract<Operation, { op: 'commit' }>): Promise<void> {
    const id = this.id(op.k);
    const stored = this.model.sessions.get(id);
    const revision = stored?.revision ?? 1;
    const count = stored?.messages.length ?? 0;
    const c: ModelCommit = {};
    if (op.expectRevision !== 'none') {
      c.expectedRevision = op.expectRevision === 'right' ? revision : revision + 5;
    }
    if (op.expectCount !== 'none') c.expectedMessageCount = op.expectCount === 'right' ? count : 0;
    if (op.body === 'append') c.append = op.messages as Message[];
    if (op.body === 'replace') c.replace = op.messages as Message[];
    if (op.body === 'truncate') {
      c.truncate = op.keep;
      if (op.messages.length > 0) c.append = op.messages as Message[];
    }
    if (op.operationId !== null) c.operationId = op.operationId;
    const patch: NonNullable<ModelCommit['patch']> = {};
    if (op.title !== null) patch.title = op.title;
    if (op.folder !== null) patch.folder = this.folders[op.folder]!;
    if (op.archive !== 'none')
      patch.archivedAt = op.archive === 'set' ? new Date(Date.UTC(2025, 0, 1)) : null;
    if (op.state !== 'none') patch.state = op.state === 'set' ? { n: op.messages.length } : null;
    if (op.metadata !== 'none') patch.metadata = { k: op.metadata === 'set' ? 'v' : null };
    if (Object.keys(patch).length > 0) c.patch = patch;
    const inc = Object.fromEntries(Object.entries(op.increment).filter(([, v]) => v !== 0));
    if (Object.keys(inc).length > 0) c.increment = inc;
    const expected = this.model.commit(id, c);
    const got = agree('commit', await attempt(() => this.store.commit(id, c as never)), expected);
    if (!got || !('ok' in expected)) return;
    const { result, replayed } = expected.ok;
    expect({ revision: got.revision, messageCount: got.messageCount }, 'commit result').toEqual({
      revision: result.revision,
      messageCount: result.messageCount,
    });
    if (replayed) {
      // A repeat resolves with the first result, its time included, and writes nothing.
      expect(got.updatedAt.getTime(), 'replayed updatedAt').toBe(result.updatedAt?.getTime());
      return;
    }
    this.adopt(id, got, false);
    result.updatedAt = new Date(got.updatedAt.getTime());
  }

  /** Every session, loaded and listed, equals the model. */
  async compareAll(): Promise<void> {
    for (const [id, m] of this.model.sessions) {
      expect(await this.store.load(id), `final load("${id}")`).toEqual(this.model.view(m));
    }
    for (const folder of this.folders) {
      const options = { folder, includeArchived: true, limit: 1000, offset: 0 };
      expect(await this.store.list(options), `final list of ${folder}`).toEqual(
        this.model.list(options),
      );
    }
  }
}

/** A well-formed session that the store does not have (for `save` of a missing id). */
function missingSession(id: string): Session {
  return prepareCreate(errorsFor('conformance'), { id }) as Session;
}
