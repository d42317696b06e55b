// BaseStore: what every adapter gets from it — capabilities from primitives, the closed
// check, validation before any I/O, readiness, error mapping and signals.
import { describe, expect, it } from 'vitest';
import { isBrancher, isCommitter, isHistoryReader, isStore } from '../src/contracts.js';
import { errorsFor, isSessionKitError } from '../src/errors.js';
import type { NormalizedListOptions } from '../src/input/list-input.js';
import { BaseStore } from '../src/kit/base-store.js';
import type { CommitInput, CommitResult, Session, SessionSummary } from '../src/types.js';

const errors = errorsFor('test');

/** A base-only store whose primitives record their calls. */
class Recorder extends BaseStore {
  calls: string[] = [];
  readiness = 0;
  failReady = 0;
  gate: Promise<void> | undefined;
  constructor() {
    super({ errors });
  }
  protected override async prepare() {
    this.readiness++;
    if (this.failReady-- > 0) throw new Error('not yet');
  }
  protected override async insertSession(session: Session) {
    this.calls.push(`insert ${session.id}`);
    return session;
  }
  protected override async readSession(id: string): Promise<Session> {
    this.calls.push(`read ${id}`);
    await this.gate;
    if (id === 'raw') throw new Error('driver exploded');
    return { id } as Session;
  }
  protected override async replaceSession(session: Session) {
    return session;
  }
  protected override async removeSession() {
    return false;
  }
  protected override async listSummaries(_o: NormalizedListOptions): Promise<SessionSummary[]> {
    return [];
  }
}

class WithCommit extends Recorder {
  protected override async writeCommit(id: string, input: CommitInput): Promise<CommitResult> {
    this.calls.push(`commit ${id} ${JSON.stringify(input)}`);
    return { revision: 2, messageCount: 0, updatedAt: new Date(0) };
  }
}

class HalfBrancher extends Recorder {
  protected override async writeBranch(): Promise<Session> {
    return {} as Session;
  }
}

const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (isSessionKitError(e) ? e.code : `raw: ${String(e)}`),
  );

describe('BaseStore', () => {
  it('offers exactly the capabilities whose primitives are implemented', () => {
    const base = new Recorder();
    expect(isStore(base)).toBe(true);
    expect(isCommitter(base)).toBe(false);
    expect(isBrancher(base)).toBe(false);
    expect(isHistoryReader(base)).toBe(false);
    expect((base as unknown as { commit?: unknown }).commit).toBeUndefined();
    expect(isCommitter(new WithCommit())).toBe(true);
    expect(() => new HalfBrancher()).toThrow(
      /Brancher needs every one of its primitives; missing writeClone, writeMerge/,
    );
  });

  it('validates before readiness and before any primitive; the primitive gets a copy', async () => {
    const store = new WithCommit();
    expect(await codeOf(store.commit('../x', {}))).toBe('invalid_argument');
    expect(await codeOf(store.commit('a', { append: 'no' as never }))).toBe('invalid_argument');
    expect(store.readiness).toBe(0);
    const append = [{ role: 'user', content: 'hi' }];
    await store.commit('a', { append });
    expect(store.calls).toEqual([`commit a ${JSON.stringify({ append })}`]);
    expect(store.readiness).toBe(1);
  });

  it('runs prepare() once, and again after it failed', async () => {
    const store = new Recorder();
    store.failReady = 1;
    expect(await codeOf(store.load('a'))).toBe('unavailable');
    await store.load('a');
    await store.load('b');
    expect(store.readiness).toBe(2);
  });

  it('maps raw failures through toStoreError and passes SessionKitErrors through', async () => {
    const store = new Recorder();
    const e = await store.load('raw').catch((x: unknown) => x);
    expect(isSessionKitError(e, 'unavailable')).toBe(true);
    expect((e as Error).message).toMatch(
      /^\[sessionkit\/test\] backend unavailable: load of session "raw"/,
    );
    expect((e as Error).cause).toBeInstanceOf(Error);
    expect(await codeOf(store.delete('gone'))).toBe('not_found');
  });

  it('closed: every call after close() fails with closed; close is idempotent', async () => {
    const store = new Recorder();
    await store.close();
    await store.close();
    expect(await codeOf(store.load('a'))).toBe('closed');
    expect(await codeOf(store.list())).toBe('closed');
    expect(store.calls).toEqual([]);
  });

  it('signals: aborted before → aborted with no primitive call; a read aborted while it runs → aborted at once', async () => {
    const store = new Recorder();
    expect(await codeOf(store.load('a', { signal: AbortSignal.abort() }))).toBe('aborted');
    expect(await codeOf(store.create({ id: 'n' }, { signal: AbortSignal.abort() }))).toBe(
      'aborted',
    );
    expect(store.calls).toEqual([]);
    await store.load('warm');
    let open!: () => void;
    store.gate = new Promise((r) => {
      open = r;
    });
    const controller = new AbortController();
    const running = store.load('slow', { signal: controller.signal });
    controller.abort();
    expect(await codeOf(running)).toBe('aborted');
    open();
    expect(await codeOf(store.load('x', { signal: 'no' as never }))).toBe('invalid_argument');
  });

  it('results: "fresh" hands over what the primitive returned, "shared" a deep copy', async () => {
    const kept = { id: 'k', messages: [{ a: 1 }] } as unknown as Session;
    class Sharing extends Recorder {
      protected override async readSession() {
        return kept;
      }
    }
    class Shared extends BaseStore {
      constructor() {
        super({ errors, results: 'shared' });
      }
      protected override async insertSession(s: Session) {
        return s;
      }
      protected override async readSession() {
        return kept;
      }
      protected override async replaceSession(s: Session) {
        return s;
      }
      protected override async removeSession() {
        return true;
      }
      protected override async listSummaries() {
        return [];
      }
    }
    expect((await new Sharing().load('k')) === kept).toBe(true);
    const copy = await new Shared().load('k');
    expect(copy).toEqual(kept);
    expect(copy).not.toBe(kept);
    expect(copy.messages).not.toBe(kept.messages);
  });
});
