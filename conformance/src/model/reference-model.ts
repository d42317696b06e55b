// A small, pure reference of DESIGN's contracts for the model-based spec: what a store
// must answer, written from the design brief and independently of every adapter (and of
// core's adapter rules, so a wrong rule in core cannot hide a wrong adapter). Timestamps
// the store chooses ("now") are adopted from its results; everything else is predicted.
import {
  type JsonValue,
  type Message,
  type MessageWindowQuery,
  messageText,
  type SessionSummary,
} from '@sessionkit/core';

/** The outcome of one operation: a value, or a `SessionKitError` code. */
export type Outcome<T> = { ok: T } | { error: string };

const ok = <T>(value: T): Outcome<T> => ({ ok: value });
const fail = (code: string): Outcome<never> => ({ error: code });

type Counters = { tokenCount: number; costUsd: number; turnCount: number };

/** What the model keeps of one session. */
export interface ModelSession extends Counters {
  id: string;
  title: string;
  folder: string;
  status: string;
  model: string;
  provider: string;
  metadata: Record<string, string>;
  parentId?: string | undefined;
  branchedAtTurn?: number | undefined;
  archivedAt?: Date | undefined;
  mode?: string | undefined;
  state?: JsonValue | undefined;
  createdAt: Date;
  updatedAt: Date;
  revision: number;
  messages: Message[];
  /** Writes that changed the history other than by appending. */
  rewrites: number;
  /** Set while it has a parent: what the branch started from. */
  base?: { parentRewrites: number; ownRewrites: number; counters: Counters } | undefined;
  runtimeStatus: JsonValue | null;
  events: { sequence: number; revision: number; type: string; payload: JsonValue; at: Date }[];
  /** The results of the commits with an operation id, by id (a new life starts empty). */
  operations?: Map<string, CommitOutcome> | undefined;
}

/** What a commit resolved with, as the model checks it. */
export interface CommitOutcome {
  revision: number;
  messageCount: number;
  /** The store's time of the first commit; adopted after it answered. */
  updatedAt?: Date | undefined;
}

/** Fields of `commit`'s patch the model generates. */
export interface ModelPatch {
  title?: string;
  folder?: string;
  status?: string;
  archivedAt?: Date | null;
  state?: JsonValue | null;
  mode?: string | null;
  metadata?: Record<string, string | null>;
  tokenCount?: number;
}

/** A commit the model generates (expectations given as the values to send). */
export interface ModelCommit {
  expectedRevision?: number;
  expectedMessageCount?: number;
  append?: Message[];
  replace?: Message[];
  truncate?: number;
  operationId?: string;
  patch?: ModelPatch;
  increment?: Partial<Counters>;
}

const SAFE = Number.MAX_SAFE_INTEGER;

function json(v: unknown): string {
  return JSON.stringify(v);
}

/** The sessions, runtime data and router of one store, as DESIGN says they must be. */
export class ReferenceModel {
  readonly sessions = new Map<string, ModelSession>();
  readonly bindings = new Map<string, { sessionId: string; key: [string, string, string] }>();
  readonly follows = new Map<string, string>();

  children(id: string): string[] {
    const out: string[] = [];
    for (const s of this.sessions.values()) if (s.parentId === id) out.push(s.id);
    return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** The session as `load` must return it. */
  view(s: ModelSession) {
    const {
      messages,
      rewrites: _r,
      base: _b,
      runtimeStatus: _s,
      events: _e,
      operations: _o,
      ...header
    } = structuredClone(s);
    return strip({ ...header, messages, children: this.children(s.id) });
  }

  /** The summary as `list` must return it. */
  summary(s: ModelSession): SessionSummary {
    const { messages, ...rest } = this.view(s) as ReturnType<ReferenceModel['view']>;
    return { ...rest, messageCount: (messages as unknown[]).length } as SessionSummary;
  }

  get(id: string): Outcome<ModelSession> {
    const s = this.sessions.get(id);
    return s ? ok(s) : fail('not_found');
  }

  /** `create`: the caller's fields; timestamps adopted from the store's answer. */
  create(input: ModelSession): Outcome<ModelSession> {
    if (this.sessions.has(input.id)) return fail('exists');
    const s = structuredClone(input);
    s.rewrites = 0;
    if (s.parentId !== undefined) {
      const parent = this.sessions.get(s.parentId);
      // An import's reference point is its creation.
      s.base = { parentRewrites: parent?.rewrites ?? 0, ownRewrites: 0, counters: countersOf(s) };
    }
    this.sessions.set(s.id, s);
    return ok(s);
  }

  /** `save` of `next` over the stored session with expected revision `revision`. */
  save(id: string, revision: number, next: Partial<ModelSession> & Pick<ModelSession, 'messages'>) {
    const s = this.sessions.get(id);
    if (!s) return fail('not_found');
    if (revision !== s.revision) return fail('conflict');
    const extended =
      next.messages.length >= s.messages.length &&
      s.messages.every((m, i) => json(m) === json(next.messages[i]));
    if (!extended) s.rewrites++;
    for (const key of ['title', 'folder', 'status', 'model', 'provider'] as const) {
      if (next[key] !== undefined) s[key] = next[key];
    }
    s.tokenCount = next.tokenCount ?? 0;
    s.costUsd = next.costUsd ?? 0;
    s.turnCount = next.turnCount ?? 0;
    s.metadata = { ...(next.metadata ?? {}) };
    s.messages = structuredClone(next.messages);
    // Absent optional fields are cleared.
    s.archivedAt = next.archivedAt;
    s.mode = next.mode;
    s.state = next.state;
    s.revision++;
    return ok(s);
  }

  /**
   * `commit`: a recorded operation id answers first (nothing written); then expectations,
   * the truncation's range, patch, increments and messages in one step.
   */
  commit(id: string, c: ModelCommit): Outcome<{ result: CommitOutcome; replayed: boolean }> {
    const s = this.sessions.get(id);
    if (!s) return fail('not_found');
    const recorded = c.operationId === undefined ? undefined : s.operations?.get(c.operationId);
    if (recorded) return ok({ result: recorded, replayed: true });
    if (c.expectedRevision !== undefined && c.expectedRevision !== s.revision)
      return fail('conflict');
    if (c.expectedMessageCount !== undefined && c.expectedMessageCount !== s.messages.length) {
      return fail('conflict');
    }
    if (c.truncate !== undefined && c.truncate > s.messages.length) return fail('invalid_argument');
    const next = structuredClone(s);
    const p = c.patch ?? {};
    if (p.title !== undefined) next.title = p.title;
    if (p.folder !== undefined) next.folder = p.folder;
    if (p.status !== undefined) next.status = p.status;
    if (p.tokenCount !== undefined) next.tokenCount = p.tokenCount;
    if (p.archivedAt !== undefined) next.archivedAt = p.archivedAt ?? undefined;
    if (p.state !== undefined) next.state = p.state ?? undefined;
    if (p.mode !== undefined) next.mode = p.mode ?? undefined;
    for (const [k, v] of Object.entries(p.metadata ?? {})) {
      if (v === null) delete next.metadata[k];
      else next.metadata[k] = v;
    }
    for (const key of ['tokenCount', 'turnCount', 'costUsd'] as const) {
      const by = c.increment?.[key];
      if (!by) continue;
      const value = next[key] + by;
      const inRange = key === 'costUsd' ? Number.isFinite(value) : value <= SAFE;
      if (!inRange || value < 0) return fail('invalid_argument');
      next[key] = value;
    }
    if (c.replace) {
      next.messages = structuredClone(c.replace);
      next.rewrites++;
    } else {
      if (c.truncate !== undefined && c.truncate < next.messages.length) {
        next.messages.length = c.truncate;
        next.rewrites++;
      }
      if (c.append) next.messages.push(...structuredClone(c.append));
    }
    next.revision++;
    const result: CommitOutcome = { revision: next.revision, messageCount: next.messages.length };
    if (c.operationId !== undefined) {
      next.operations = new Map(next.operations ?? []);
      next.operations.set(c.operationId, result);
    }
    this.sessions.set(id, next);
    return ok({ result, replayed: false });
  }

  /** `delete` with promotion of the children to the grandparent. */
  delete(id: string): Outcome<true> {
    const gone = this.sessions.get(id);
    if (!gone) return fail('not_found');
    this.sessions.delete(id);
    for (const child of this.sessions.values()) {
      if (child.parentId !== id) continue;
      const grand = gone.parentId;
      if (grand === undefined || grand === child.id) {
        child.parentId = undefined;
        child.base = undefined;
        continue;
      }
      child.parentId = grand;
      if (child.branchedAtTurn !== undefined) {
        child.branchedAtTurn = Math.min(child.branchedAtTurn, gone.branchedAtTurn ?? 0);
      }
      const goneBase = gone.base ?? { parentRewrites: 0, ownRewrites: 0, counters: undefined };
      const goneRewrote = gone.rewrites !== goneBase.ownRewrites;
      child.base = {
        parentRewrites: goneBase.parentRewrites,
        ownRewrites: goneRewrote ? -1 : (child.base?.ownRewrites ?? 0),
        counters: goneBase.counters ?? countersOf(child),
      };
    }
    for (const [k, b] of this.bindings) if (b.sessionId === id) this.bindings.delete(k);
    for (const [k, target] of this.follows) if (target === id) this.follows.delete(k);
    return ok(true);
  }

  /** `branch`: a new session (id chosen by the store) over the parent's first `atTurn`. */
  branch(parentId: string, atTurn: number, childId: string): Outcome<ModelSession> {
    const p = this.sessions.get(parentId);
    if (!p) return fail('not_found');
    if (atTurn > p.messages.length) return fail('invalid_argument');
    const child: ModelSession = {
      ...structuredClone(p),
      id: childId,
      parentId,
      branchedAtTurn: atTurn,
      metadata: { ...p.metadata, branchedFrom: parentId },
      status: 'active',
      messages: structuredClone(p.messages.slice(0, atTurn)),
      archivedAt: undefined,
      revision: 1,
      rewrites: 0,
      base: { parentRewrites: p.rewrites, ownRewrites: 0, counters: countersOf(p) },
      runtimeStatus: null,
      events: [],
      operations: undefined,
    };
    this.sessions.set(childId, child);
    return ok(child);
  }

  /** `clone`: an independent copy (id chosen by the store). */
  clone(id: string, copyId: string): Outcome<ModelSession> {
    const src = this.sessions.get(id);
    if (!src) return fail('not_found');
    const copy: ModelSession = {
      ...structuredClone(src),
      id: copyId,
      parentId: undefined,
      branchedAtTurn: undefined,
      archivedAt: undefined,
      metadata: { ...src.metadata, clonedFrom: id },
      revision: 1,
      rewrites: 0,
      base: undefined,
      runtimeStatus: null,
      events: [],
      operations: undefined,
    };
    this.sessions.set(copyId, copy);
    return ok(copy);
  }

  /** `merge`: fast-forward, or `merge_diverged` when the parent changed after the branch. */
  merge(childId: string): Outcome<ModelSession> {
    const c = this.sessions.get(childId);
    if (!c) return fail('not_found');
    if (c.parentId === undefined) return fail('invalid_argument');
    const p = this.sessions.get(c.parentId);
    if (!p) return fail('not_found');
    const base = c.base ?? { parentRewrites: 0, ownRewrites: 0, counters: undefined };
    if (p.messages.length !== (c.branchedAtTurn ?? 0)) return fail('merge_diverged');
    if (p.rewrites !== base.parentRewrites) return fail('merge_diverged');
    const next = structuredClone(p);
    for (const key of ['tokenCount', 'costUsd', 'turnCount'] as const) {
      const b = base.counters?.[key];
      if (b === undefined) next[key] = c[key];
      else if (c[key] === b) next[key] = p[key];
      else if (p[key] === b) next[key] = c[key];
      else next[key] = Math.max(0, p[key] + (c[key] - b));
    }
    next.messages = structuredClone(c.messages);
    if (c.rewrites !== base.ownRewrites) next.rewrites++;
    next.revision++;
    this.sessions.set(p.id, next);
    return ok(next);
  }

  /** `loadMessages` with a window. */
  window(id: string, w: MessageWindowQuery | undefined): Outcome<Message[]> {
    const s = this.sessions.get(id);
    if (!s) return fail('not_found');
    const n = s.messages.length;
    if (w?.last !== undefined)
      return ok(structuredClone(s.messages.slice(Math.max(0, n - w.last))));
    const start = Math.min(w?.offset ?? 0, n);
    const end = w?.limit === undefined ? n : Math.min(n, start + w.limit);
    return ok(structuredClone(s.messages.slice(start, end)));
  }

  /** `list` with the options the model generates; `now`-free: order by adopted times. */
  list(o: {
    folder: string;
    status?: string;
    query?: string;
    includeArchived?: boolean;
    oldestFirst?: boolean;
    limit: number;
    offset: number;
  }): SessionSummary[] {
    const q = o.query?.toLowerCase();
    const hits = [...this.sessions.values()].filter((s) => {
      if (s.folder !== o.folder) return false;
      if (o.status !== undefined && s.status !== o.status) return false;
      if (!o.includeArchived && s.archivedAt) return false;
      if (q) {
        const inTitle = s.title.toLowerCase().includes(q);
        const inText = s.messages.some((m) => messageSearchText(m).includes(q));
        if (!inTitle && !inText) return false;
      }
      return true;
    });
    hits.sort((a, b) => {
      const c =
        a.updatedAt.getTime() - b.updatedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      return o.oldestFirst ? c : -c;
    });
    return hits.slice(o.offset, o.offset + o.limit).map((s) => this.summary(s));
  }

  /** `enforceMax`: the roots beyond the newest `max` (list order) are deleted. */
  enforceMax(max: number): number {
    if (max <= 0) return 0;
    const roots = [...this.sessions.values()]
      .filter((s) => s.parentId === undefined)
      .sort(
        (a, b) =>
          b.updatedAt.getTime() - a.updatedAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
      );
    const victims = roots.slice(max).map((s) => s.id);
    for (const id of victims) this.delete(id);
    return victims.length;
  }

  /** The router's resolve rule. */
  resolve(key: [string, string, string], live: string): string {
    const target = this.follows.get(json([key[0], key[1]]));
    if (target !== undefined && target !== '') {
      if (target !== 'tui') return target;
      if (live !== '') return live;
    }
    return this.bindings.get(json(key))?.sessionId ?? '';
  }
}

/**
 * What search sees of one message, lower-cased: core's `messageText`, the data model's
 * definition of a message's text (the model re-derives the rules, not the data model).
 */
function messageSearchText(m: unknown): string {
  return messageText(m).toLowerCase();
}

function countersOf(s: Counters): Counters {
  return { tokenCount: s.tokenCount, costUsd: s.costUsd, turnCount: s.turnCount };
}

/** Drops `undefined` properties, as a store's answers never carry them. */
function strip<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}
