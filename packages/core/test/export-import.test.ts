import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorsFor } from '../src/adapter.js';
import {
  exportSessions,
  importSessions,
  isSessionKitError,
  type ListOptions,
  type Message,
  type Session,
  type SessionInput,
  type SessionSummary,
  type Store,
} from '../src/index.js';
import { FakeFullStore, FakeStore } from './fixtures/fake-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sessionkit-export-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isSessionKitError(e)) return { code: e.code, message: e.message };
    return { code: `not a SessionKitError: ${String(e)}`, message: String(e) };
  }
  return { code: 'resolved', message: '' };
}

async function lines(path: string): Promise<string[]> {
  return (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '');
}

const at = (iso: string) => new Date(iso);

/** Sessions that exercise the format: unicode, nested JSON, a tree, archived, state. */
const FIXTURES: SessionInput[] = [
  {
    id: 'unicode',
    title: '日本語のセッション — émoji 🎉 עברית',
    folder: '/home/zoë/项目',
    model: 'model-ü',
    provider: 'prov',
    createdAt: at('2024-02-29T12:00:00.001Z'),
    updatedAt: at('2024-03-01T08:30:15.123Z'),
    tokenCount: 1234,
    costUsd: 0.0375,
    turnCount: 2,
    metadata: { lang: 'ja', 'key with spaces': 'värde ✓' },
    messages: [
      {
        role: 'user',
        content: 'こんにちは 👋 \u2028 line separator, NUL \u0000, lone \ud83d surrogate',
      },
      { role: 'assistant', content: 'Привет!\n\t"quoted" \\ backslash' },
    ],
    mode: 'plan',
    state: { plan: ['étape 1', { nested: [1, [2, [3, null]]] }], goal: null, n: 1e-7 },
  },
  {
    id: 'nested',
    title: 'tools',
    updatedAt: at('2024-03-01T08:00:00.999Z'),
    messages: [
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'calling a tool' },
          { type: 'image', mediaType: 'image/png', url: 'https://example.test/a.png' },
        ],
        toolCalls: [
          {
            id: 'call_1',
            name: 'search',
            arguments: { query: 'x', filters: { deep: { deeper: [true, false, 0, -1.5, ''] } } },
          },
        ],
        metadata: { latencyMs: 12, tags: ['a', 'b'] },
      },
      { role: 'tool', toolCallId: 'call_1', name: 'search', content: '{"not":"parsed"}' },
    ],
  },
  {
    id: 'parent',
    title: 'parent',
    updatedAt: at('2024-02-01T00:00:00.000Z'),
    messages: [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
    ],
  },
  {
    id: 'child',
    title: 'branch',
    parentId: 'parent',
    branchedAtTurn: 1,
    updatedAt: at('2024-02-02T00:00:00.000Z'),
    messages: [{ role: 'user', content: 'one' }],
  },
  {
    id: 'archived',
    title: 'old',
    status: 'done',
    updatedAt: at('2023-12-31T23:59:59.999Z'),
    archivedAt: at('2024-01-01T00:00:00.000Z'),
  },
  { id: 'empty', updatedAt: at('2023-06-01T00:00:00.000Z') },
];

async function fill<S extends Store<Message>>(store: S): Promise<S> {
  for (const input of FIXTURES) await store.create(input);
  return store;
}

async function loadAll(store: Store): Promise<Session[]> {
  const out: Session[] = [];
  for (const s of await store.list({ includeArchived: true, limit: 1000 })) {
    out.push(await store.load(s.id));
  }
  return out;
}

describe('exportSessions / importSessions', () => {
  it('round-trips sessions, runtime status and events into a fresh store', async () => {
    const source = await fill(new FakeFullStore());
    // A later revision: the import starts the target at revision 1.
    const saved = await source.save({ ...(await source.load('empty')), title: 'renamed' });
    expect(saved.revision).toBe(2);
    await source.saveRuntimeStatus('unicode', { checks: [{ name: 'lint', ok: true }], note: 'ü' });
    await source.append('nested', 'turn.start', { n: 1 });
    await source.append('nested', 'tool.call', { name: 'search', args: { deep: [1, 2] } });
    await source.append('nested', 'turn.end');

    const file = join(dir, 'sessions.jsonl');
    expect(await exportSessions(source, file, { pageSize: 2 })).toEqual({ exported: 6 });

    const target = new FakeFullStore();
    expect(await importSessions(target, file)).toEqual({ imported: 6, skipped: 0 });

    const before = await loadAll(source);
    const after = await loadAll(target);
    expect(after.map((s) => s.id)).toEqual(before.map((s) => s.id));
    expect(after).toEqual(before.map((s) => ({ ...s, revision: 1 })));
    // Dates to the millisecond, not just "equal-ish".
    for (const [i, s] of after.entries()) {
      expect(s.createdAt.getTime()).toBe(before[i]!.createdAt.getTime());
      expect(s.updatedAt.getTime()).toBe(before[i]!.updatedAt.getTime());
      expect(s.archivedAt?.getTime()).toBe(before[i]!.archivedAt?.getTime());
    }
    expect((await target.load('parent')).children).toEqual(['child']);
    expect((await target.load('child')).parentId).toBe('parent');
    expect(await target.loadRuntimeStatus('unicode')).toEqual({
      checks: [{ name: 'lint', ok: true }],
      note: 'ü',
    });
    expect(await target.loadRuntimeStatus('nested')).toBeNull();
    const events = await target.events('nested');
    expect(events.map((e) => [e.sequence, e.type, e.payload])).toEqual([
      [1, 'turn.start', { n: 1 }],
      [2, 'tool.call', { name: 'search', args: { deep: [1, 2] } }],
      [3, 'turn.end', null],
    ]);
    expect(await target.events('unicode')).toEqual([]);
  });

  it('writes a header line, then one JSON line per session, newest first, with ISO dates', async () => {
    const source = await fill(new FakeFullStore());
    await source.saveRuntimeStatus('parent', { ok: 1 });
    await source.append('child', 'created', { from: 'parent' });
    const file = join(dir, 'out.jsonl');
    const started = Date.now();
    await exportSessions(source, file);

    const [header, ...records] = (await lines(file)).map((l) => JSON.parse(l));
    expect(header).toEqual({
      format: 'sessionkit-export',
      version: 1,
      exportedAt: expect.any(String),
    });
    expect(Date.parse(header.exportedAt)).toBeGreaterThanOrEqual(started - 1000);
    expect(records.map((r) => r.session.id)).toEqual([
      'unicode',
      'nested',
      'child',
      'parent',
      'archived',
      'empty',
    ]);
    const unicode = records[0];
    expect(unicode.session.updatedAt).toBe('2024-03-01T08:30:15.123Z');
    expect(unicode.session.messages).toEqual(FIXTURES[0]!.messages);
    expect(Object.keys(unicode)).toEqual(['session']);
    expect(records[3]).toMatchObject({ session: { id: 'parent' }, runtimeStatus: { ok: 1 } });
    expect(records[2].events).toEqual([
      expect.objectContaining({ sequence: 1, type: 'created', payload: { from: 'parent' } }),
    ]);
  });

  it('works with stores without runtime status or events, in both directions', async () => {
    const full = await fill(new FakeFullStore());
    await full.saveRuntimeStatus('parent', { ok: true });
    await full.append('parent', 'e', 1);
    const withExtras = join(dir, 'extras.jsonl');
    await exportSessions(full, withExtras);

    // Into a base store: the sessions arrive, status and events are dropped.
    const base = new FakeStore();
    expect(await importSessions(base, withExtras)).toEqual({ imported: 6, skipped: 0 });
    expect((await base.load('parent')).messages).toHaveLength(2);

    // From a base store: records carry only the session.
    const plain = join(dir, 'plain.jsonl');
    expect(await exportSessions(base, plain)).toEqual({ exported: 6 });
    const records = (await lines(plain)).slice(1).map((l) => JSON.parse(l));
    expect(records.every((r) => Object.keys(r).join() === 'session')).toBe(true);
  });

  it('exports only the given folder when asked', async () => {
    const source = new FakeStore();
    await source.create({ id: 'a1', folder: 'a' });
    await source.create({ id: 'b1', folder: 'b' });
    await source.create({ id: 'a2', folder: 'a', archivedAt: new Date() });
    const file = join(dir, 'a.jsonl');
    expect(await exportSessions(source, file, { folder: 'a', pageSize: 1 })).toEqual({
      exported: 2,
    });
    const ids = (await lines(file)).slice(1).map((l) => JSON.parse(l).session.id);
    expect(ids.sort()).toEqual(['a1', 'a2']);
  });

  it('skips sessions deleted while the export runs', async () => {
    const source = await fill(new FakeStore());
    source.hooks.beforeLoad = async (_id, call) => {
      // 'archived' is on the page already listed when this runs.
      if (call === 1) await source.delete('archived');
    };
    const file = join(dir, 'out.jsonl');
    expect(await exportSessions(source, file, { pageSize: 1000 })).toEqual({ exported: 5 });
    const ids = (await lines(file)).slice(1).map((l) => JSON.parse(l).session.id);
    expect(ids).not.toContain('archived');
    expect(ids).toHaveLength(5);
  });

  it('replaces the target atomically: a failed export leaves the old file and no temp file', async () => {
    const source = await fill(new FakeStore());
    const file = join(dir, 'export.jsonl');
    await writeFile(file, 'previous export\n');
    await chmod(file, 0o644);
    const seenMidway: { target: string; others: string[] }[] = [];
    source.hooks.beforeLoad = async (_id, call) => {
      if (call === 3) {
        // Two sessions are written by now, but only to the temp file.
        seenMidway.push({
          target: await readFile(file, 'utf8'),
          others: (await readdir(dir)).filter((f) => f !== 'export.jsonl'),
        });
        throw errorsFor('fake').unavailable('connection reset');
      }
    };
    const failed = await rejection(exportSessions(source, file, { pageSize: 2 }));
    expect(failed.code).toBe('unavailable');
    expect(seenMidway).toEqual([
      {
        target: 'previous export\n',
        others: [expect.stringMatching(/^\.export\.jsonl\..*\.tmp$/)],
      },
    ]);
    expect(await readFile(file, 'utf8')).toBe('previous export\n');
    expect(await readdir(dir)).toEqual(['export.jsonl']);

    source.hooks.beforeLoad = undefined;
    expect(await exportSessions(source, file)).toEqual({ exported: 6 });
    expect(await readdir(dir)).toEqual(['export.jsonl']);
    // Exports hold conversations: owner-only, even when replacing a wider file.
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await lines(file)).toHaveLength(7);
  });

  it('fails with corrupt on a store whose cursor does not advance, leaving no file', async () => {
    const source = await fill(new FakeStore());
    const list = source.list.bind(source);
    // Ignores startAfter: always the first page, which would loop forever.
    source.list = (options?: ListOptions): Promise<SessionSummary[]> =>
      list({ ...options, startAfter: undefined });
    const file = join(dir, 'loop.jsonl');
    const failed = await rejection(exportSessions(source, file, { pageSize: 2 }));
    expect(failed.code).toBe('corrupt');
    expect(failed.message).toMatch(/exportSessions: the store listed "\w+" out of order/);
    expect(source.counts.list).toBe(2);
    expect(await readdir(dir)).toEqual([]);
  });

  it('creates the export file with mode 0600', async () => {
    const file = join(dir, 'fresh.jsonl');
    await exportSessions(await fill(new FakeStore()), file);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('round-trips a long transcript line', async () => {
    const source = new FakeStore();
    const big = 'ä'.repeat(1_500_000);
    await source.create({ id: 'big', messages: [{ role: 'user', content: big }] });
    const file = join(dir, 'big.jsonl');
    await exportSessions(source, file);
    const target = new FakeStore();
    await importSessions(target, file);
    expect((await target.load('big')).messages[0]?.content).toBe(big);
  });

  describe('importSessions on a bad file', () => {
    const header = JSON.stringify({
      format: 'sessionkit-export',
      version: 1,
      exportedAt: '2024-01-01T00:00:00.000Z',
    });
    const good = (id: string) =>
      JSON.stringify({ session: { id, title: id, updatedAt: '2024-01-01T00:00:00.000Z' } });

    async function importText(text: string, target: Store = new FakeStore()) {
      const file = join(dir, 'in.jsonl');
      await writeFile(file, text);
      const failure = await rejection(importSessions(target, file));
      const fake = target as FakeStore;
      return { failure, created: fake.counts.create, size: fake.size };
    }

    it('rejects a missing, foreign or newer header as corrupt, naming the line', async () => {
      for (const first of [
        '',
        'not json at all',
        '[1,2,3]',
        JSON.stringify({ format: 'other-tool', version: 1 }),
        JSON.stringify({ format: 'sessionkit-export', version: 2 }),
        JSON.stringify({ format: 'sessionkit-export' }),
      ]) {
        const { failure, created } = await importText(`${first}\n${good('a')}\n`);
        // An empty first line is skipped, so the record line is read as the header.
        expect(failure.code, first).toBe('corrupt');
        expect(failure.message, first).toMatch(/line [12]\b/);
        expect(created).toBe(0);
      }
      const version2 = await importText(
        `${JSON.stringify({ format: 'sessionkit-export', version: 2 })}\n`,
      );
      expect(version2.failure.message).toMatch(/line 1: unsupported export version 2/);
      expect((await importText('')).failure).toMatchObject({ code: 'corrupt' });
    });

    it('rejects a bad JSON line as corrupt naming its line, before importing anything', async () => {
      const { failure, created, size } = await importText(
        `${header}\n${good('a')}\n\n{"session": {"id": "b",\n${good('c')}\n`,
      );
      expect(failure.code).toBe('corrupt');
      expect(failure.message).toMatch(/line 4: not valid JSON/);
      expect(created).toBe(0);
      expect(size).toBe(0);
    });

    it('rejects records that are not valid sessions as corrupt with their line', async () => {
      const bad = [
        JSON.stringify({ session: { id: '../etc/passwd' } }),
        JSON.stringify({ session: { id: 'x', updatedAt: 'yesterday' } }),
        JSON.stringify({ session: { id: 'x', createdAt: 12345 } }),
        JSON.stringify({ session: { id: 'x', tokenCount: -1 } }),
        JSON.stringify({ session: 'x' }),
        JSON.stringify({ sessions: { id: 'x' } }),
        JSON.stringify({ session: { id: 'x' }, extra: 1 }),
        JSON.stringify({ session: { id: 'x' }, events: { type: 'e' } }),
        JSON.stringify({ session: { id: 'x' }, events: [{ payload: 1 }] }),
        JSON.stringify({ session: { id: 'x' }, events: [{ type: '' }] }),
        JSON.stringify({ session: { id: 'x' }, events: [{ type: 7 }] }),
        JSON.stringify({ session: { id: 'x' }, events: [{ type: 'a\u0000b' }] }),
      ];
      for (const line of bad) {
        const { failure, created } = await importText(`${header}\n${good('a')}\n${line}\n`);
        expect(failure.code, line).toBe('corrupt');
        expect(failure.message, line).toMatch(/line 3: /);
        expect(created, line).toBe(0);
      }
    });
  });

  describe('importSessions checks what the writes would check, before the first write', () => {
    const header = JSON.stringify({ format: 'sessionkit-export', version: 1 });
    const good = (id: string) => JSON.stringify({ session: { id, title: id } });

    async function importInto(target: FakeStore, text: string, onExisting?: 'skip' | 'replace') {
      const file = join(dir, 'in.jsonl');
      await writeFile(file, text);
      return rejection(importSessions(target, file, onExisting ? { onExisting } : {}));
    }

    it('rejects a runtime status over 2 MiB as corrupt naming the line, importing nothing', async () => {
      const target = new FakeFullStore();
      // 3 MiB of JSON; the good lines around it must not be imported either.
      const status = { blob: 'x'.repeat(3 * 1024 * 1024) };
      const text = [
        header,
        good('a'),
        JSON.stringify({ session: { id: 'big' }, runtimeStatus: status }),
        good('c'),
      ].join('\n');
      const failure = await importInto(target, text);
      expect(failure.code).toBe('corrupt');
      expect(failure.message).toMatch(
        /line 3: runtimeStatus is 3145739 bytes, over the limit of 2097152/,
      );
      expect(target.counts.create).toBe(0);
      expect(target.size).toBe(0);

      // Exactly at the limit is fine (the store's own rule), so the check is not stricter.
      const atLimit = { s: 'y'.repeat(2 * 1024 * 1024 - 8) };
      expect(JSON.stringify(atLimit)).toHaveLength(2 * 1024 * 1024);
      const ok = new FakeFullStore();
      const okFile = join(dir, 'ok.jsonl');
      await writeFile(
        okFile,
        `${header}\n${JSON.stringify({ session: { id: 'edge' }, runtimeStatus: atLimit })}\n`,
      );
      expect(await importSessions(ok, okFile)).toEqual({ imported: 1, skipped: 0 });
      expect(await ok.loadRuntimeStatus('edge')).toEqual(atLimit);
    });

    it('rejects an overlong event type as corrupt naming the line, importing nothing', async () => {
      const target = new FakeFullStore();
      const events = [
        { sequence: 1, type: 'ok', payload: null },
        { sequence: 2, type: 't'.repeat(1025), payload: { n: 1 } },
      ];
      const text = [
        header,
        good('a'),
        good('b'),
        JSON.stringify({ session: { id: 'x' }, events }),
      ].join('\n');
      const failure = await importInto(target, text);
      expect(failure.code).toBe('corrupt');
      expect(failure.message).toMatch(
        /line 4: invalid events\[1\]: event type is longer than 1024/,
      );
      expect(failure.message).not.toMatch(/: \[sessionkit\/core\]/);
      expect(target.counts.create).toBe(0);
      expect(target.size).toBe(0);
    });

    it('rejects an id that appears twice in the file as corrupt naming both lines', async () => {
      for (const onExisting of [undefined, 'skip', 'replace'] as const) {
        const target = new FakeFullStore();
        const text = `${header}\n${good('a')}\n${good('b')}\n\n${good('a')}\n${good('c')}\n`;
        const failure = await importInto(target, text, onExisting);
        expect(failure.code, onExisting).toBe('corrupt');
        expect(failure.message, onExisting).toMatch(
          /line 5: duplicate session id "a" \(first on line 2\)/,
        );
        expect(target.counts.create, onExisting).toBe(0);
        expect(target.size, onExisting).toBe(0);
      }
    });

    it('accepts any JSON runtime status within the limit, null and nested arrays included', async () => {
      const target = new FakeFullStore();
      const lines = [
        header,
        JSON.stringify({ session: { id: 'n' }, runtimeStatus: null }),
        JSON.stringify({ session: { id: 'm' }, runtimeStatus: [1, [2, { x: -0.5 }]] }),
      ].join('\n');
      const file = join(dir, 'json.jsonl');
      await writeFile(file, lines);
      expect(await importSessions(target, file)).toEqual({ imported: 2, skipped: 0 });
      expect(await target.loadRuntimeStatus('m')).toEqual([1, [2, { x: -0.5 }]]);
    });
  });

  describe('importSessions onExisting', () => {
    async function setup() {
      const source = new FakeFullStore();
      await source.create({ id: 'a', title: 'theirs', createdAt: at('2020-01-01T00:00:00.000Z') });
      await source.create({ id: 'b', title: 'new', updatedAt: at('2030-01-01T00:00:00.000Z') });
      await source.saveRuntimeStatus('a', { from: 'file' });
      const file = join(dir, 'in.jsonl');
      await exportSessions(source, file);
      const target = new FakeFullStore();
      await target.create({ id: 'a', title: 'mine' });
      await target.saveRuntimeStatus('a', { from: 'target' });
      return { file, target };
    }

    /** Makes the create of `id` that follows its delete throw `cause`. */
    function failCreateAfterDelete(target: FakeStore, id: string, cause: unknown) {
      let deleted = false;
      target.hooks.beforeDelete = (d) => {
        if (d === id) deleted = true;
      };
      target.hooks.beforeCreate = (c) => {
        if (c === id && deleted) throw cause;
      };
    }

    it("fails with the store's exists error by default ('fail')", async () => {
      const { file, target } = await setup();
      expect((await rejection(importSessions(target, file))).code).toBe('exists');
      // Lines before the existing session were imported (newest first: b, then a).
      expect(target.has('b')).toBe(true);
      expect((await target.load('a')).title).toBe('mine');
      const explicit = await setup();
      expect(
        (await rejection(importSessions(explicit.target, explicit.file, { onExisting: 'fail' })))
          .code,
      ).toBe('exists');
    });

    it("leaves existing sessions alone and counts them with 'skip'", async () => {
      const { file, target } = await setup();
      expect(await importSessions(target, file, { onExisting: 'skip' })).toEqual({
        imported: 1,
        skipped: 1,
      });
      expect((await target.load('a')).title).toBe('mine');
      expect(await target.loadRuntimeStatus('a')).toEqual({ from: 'target' });
      expect((await target.load('b')).title).toBe('new');
    });

    it("deletes and re-creates existing sessions with 'replace'", async () => {
      const { file, target } = await setup();
      expect(await importSessions(target, file, { onExisting: 'replace' })).toEqual({
        imported: 2,
        skipped: 0,
      });
      const a = await target.load('a');
      expect(a.title).toBe('theirs');
      expect(a.createdAt.toISOString()).toBe('2020-01-01T00:00:00.000Z');
      expect(a.revision).toBe(1);
      expect(await target.loadRuntimeStatus('a')).toEqual({ from: 'file' });
    });

    it("'replace' promotes the stored session's children, which stay promoted", async () => {
      const { file, target } = await setup();
      await target.create({ id: 'kid', parentId: 'a' });
      await target.create({ id: 'grandkid', parentId: 'kid' });
      expect((await target.load('a')).children).toEqual(['kid']);
      await importSessions(target, file, { onExisting: 'replace' });
      // 'a' had no parent, so its child became a root; the file does not re-attach it.
      expect((await target.load('kid')).parentId).toBeUndefined();
      expect((await target.load('grandkid')).parentId).toBe('kid');
      expect((await target.load('a')).children).toEqual([]);
    });

    it("'replace' detaches a child the file lists before its parent (documented)", async () => {
      const source = new FakeFullStore();
      await source.create({ id: 'p', createdAt: at('2024-01-01T00:00:00.000Z') });
      await source.create({ id: 'c', parentId: 'p', createdAt: at('2024-01-02T00:00:00.000Z') });
      const file = join(dir, 'tree.jsonl');
      await exportSessions(source, file);
      const ids = (await lines(file)).slice(1).map((l) => JSON.parse(l).session.id);
      expect(ids).toEqual(['c', 'p']); // newest first: the branch comes before its parent
      const target = new FakeFullStore();
      await target.create({ id: 'p' });
      await target.create({ id: 'c', parentId: 'p' });
      await importSessions(target, file, { onExisting: 'replace' });
      expect((await target.load('c')).parentId).toBeUndefined();
      expect((await target.load('p')).children).toEqual([]);
    });

    it("'replace' reports a create that fails after the delete as an error naming the session", async () => {
      const { file, target } = await setup();
      const cause = errorsFor('fake').unavailable('connection reset');
      failCreateAfterDelete(target, 'a', cause);
      let thrown: unknown;
      try {
        await importSessions(target, file, { onExisting: 'replace' });
      } catch (e) {
        thrown = e;
      }
      expect(isSessionKitError(thrown, 'unavailable')).toBe(true);
      const e = thrown as Error & { sessionId?: string; cause?: unknown };
      expect(e.sessionId).toBe('a');
      expect(e.cause).toBe(cause);
      expect(e.message).toMatch(/replacing session "a": the stored session was deleted/);
      expect(e.message).toContain('connection reset');
      // Both versions are gone from the store; re-running the import restores it.
      expect(target.has('a')).toBe(false);
      target.hooks = {};
      expect(await importSessions(target, file, { onExisting: 'replace' })).toEqual({
        imported: 2,
        skipped: 0,
      });
      expect((await target.load('a')).title).toBe('theirs');
    });

    it("'replace' wraps a non-sessionkit create failure as unavailable naming the session", async () => {
      const { file, target } = await setup();
      const cause = new Error('socket hang up');
      failCreateAfterDelete(target, 'a', cause);
      let thrown: unknown;
      try {
        await importSessions(target, file, { onExisting: 'replace' });
      } catch (e) {
        thrown = e;
      }
      expect(isSessionKitError(thrown, 'unavailable')).toBe(true);
      expect((thrown as Error).message).toContain('"a"');
      expect((thrown as Error).cause).toBe(cause);
    });
  });

  describe('argument checks', () => {
    it('rejects bad paths and options with invalid_argument before any I/O', async () => {
      const store = await fill(new FakeStore());
      const file = join(dir, 'x.jsonl');
      const calls: Promise<unknown>[] = [
        exportSessions(store, ''),
        exportSessions(store, 'a\u0000b'),
        exportSessions(store, 7 as unknown as string),
        exportSessions(store, file, { pageSize: 0 }),
        exportSessions(store, file, { pageSize: 1001 }),
        exportSessions(store, file, { pageSize: 1.5 }),
        exportSessions(store, file, { folder: 3 as unknown as string }),
        exportSessions(store, file, { limit: 5 } as object),
        exportSessions(store, file, 'options' as unknown as object),
        importSessions(store, ''),
        importSessions(store, file, { onExisting: 'merge' as 'skip' }),
        importSessions(store, file, { onExisting: 'skip', dryRun: true } as object),
      ];
      for (const [i, call] of calls.entries()) {
        expect((await rejection(call)).code, `call ${i}`).toBe('invalid_argument');
      }
      expect(store.counts.list).toBe(0);
      expect(await readdir(dir)).toEqual([]);
    });

    it('reports unusable paths as invalid_argument and leaves nothing behind', async () => {
      const store = await fill(new FakeStore());
      const missingFolder = join(dir, 'no', 'such', 'out.jsonl');
      expect((await rejection(exportSessions(store, missingFolder))).code).toBe('invalid_argument');
      expect((await rejection(importSessions(store, join(dir, 'missing.jsonl')))).code).toBe(
        'invalid_argument',
      );
      expect(await readdir(dir)).toEqual([]);
    });
  });
});
