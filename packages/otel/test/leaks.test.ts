// No span or metric holds what a caller wrote: a workload puts a marker into every text
// a session has (messages, title, folder, status, metadata keys and values, model, state,
// router keys, events, runtime status, a search query, an operation id) and into inputs
// that stores reject with messages quoting them; then every exported span and metric is
// scanned for the marker.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitTurn, type FullStore } from '@sessionkit/core';
import { FileStore } from '@sessionkit/file';
import { MemoryStore } from '@sessionkit/memory';
import { afterAll, describe, expect, it } from 'vitest';
import { instrumentStore } from '../src/index.js';
import { auditSpan } from './support/audit.js';
import { RecordingTelemetry } from './support/telemetry.js';

const MARK = 'Zq7marker';
const marked = (what: string) => `${what} ${MARK} ${what}`;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs every kind of call with marked values; returns the messages of the errors it met. */
async function markedWorkload(store: FullStore): Promise<string[]> {
  const errors: string[] = [];
  const attempt = async (call: () => Promise<unknown>) => {
    try {
      await call();
    } catch (e) {
      errors.push((e as Error).message);
    }
  };
  const text = { role: 'user', content: marked('message') };
  const parts = { role: 'assistant', content: [{ type: 'text', text: marked('part') }] };
  const s = await store.create({
    id: 'leak-1',
    title: marked('title'),
    folder: `/work/${MARK}`,
    status: marked('status'),
    model: marked('model'),
    provider: marked('provider'),
    mode: marked('mode'),
    metadata: { [marked('key')]: marked('value') },
    state: { plan: marked('state') },
    messages: [text],
  });
  await store.commit(s.id, {
    append: [parts],
    patch: { title: marked('new title'), metadata: { note: marked('note') } },
    increment: { turnCount: 1 },
  });
  await commitTurn(store, s.id, { append: [text] });
  await store.save({ ...(await store.load(s.id)), title: marked('saved title') });
  await store.list({ query: MARK, folder: `/work/${MARK}`, status: marked('status') });
  await store.loadMessages(s.id, { last: 2 });
  await store.loadMessageWindow!(s.id, { last: 1 });
  const branch = await store.branch(s.id, (await store.loadMessages(s.id)).length);
  await store.commit(branch.id, { append: [text] });
  await store.merge(branch.id);
  const clone = await store.clone(s.id);
  await store.saveRuntimeStatus(s.id, { check: marked('status json') });
  await store.loadRuntimeStatus(s.id);
  await store.bind(marked('channel'), marked('chat'), marked('thread'), s.id);
  await store.follow(marked('channel'), marked('chat'), 'tui');
  await store.resolve(marked('channel'), marked('chat'), marked('thread'), s.id);
  await store.touch(marked('channel'), marked('chat'), marked('thread'));
  await store.recent(10);
  await store.unbind(marked('channel'), marked('chat'), marked('thread'));
  await store.append(s.id, `tool.${MARK}`, { output: marked('payload') });
  await store.events(s.id);
  // Rejected inputs whose error messages quote the caller's values.
  await attempt(() => store.load(`${MARK}/../etc`));
  await attempt(() => store.create({ id: s.id, title: marked('taken') }));
  await attempt(() => store.commit(s.id, { append: [{ [MARK]: Number.NaN }] as never }));
  await attempt(() => store.commit(s.id, { patch: { title: `${MARK}\u0000` } }));
  await attempt(() => store.commit(s.id, { [MARK]: 1 } as never));
  await attempt(() => store.list({ [MARK]: true } as never));
  await attempt(() => store.commit(s.id, { expectedRevision: 1, append: [text] }));
  await attempt(() => store.append(s.id, `${MARK}\u0000`, null));
  await attempt(() => store.saveRuntimeStatus(s.id, { big: MARK.repeat(300_000) }));
  await store.repair();
  await store.delete(clone.id);
  await store.enforceMax(1);
  await store.close();
  return errors;
}

/** Every text of a span that an exporter sends, as one string. */
function exported(telemetry: RecordingTelemetry): string {
  return JSON.stringify(
    telemetry.spans().map((s) => ({
      name: s.name,
      attributes: s.attributes,
      events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
      status: s.status,
      links: s.links,
    })),
  );
}

const stores: [string, () => FullStore][] = [
  ['memory', () => new MemoryStore()],
  [
    'file',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'sk-otel-leak-'));
      dirs.push(dir);
      return new FileStore({ dir: join(dir, 'store') });
    },
  ],
];

describe('leaks › no caller text reaches a span or a metric', () => {
  for (const [kind, make] of stores) {
    for (const sessionIds of [false, true]) {
      it(`${kind} store, sessionIds: ${sessionIds}`, async () => {
        const telemetry = new RecordingTelemetry();
        const store = instrumentStore(make(), { ...telemetry.providers, sessionIds });
        const errors = await markedWorkload(store as FullStore);
        // The stores did quote the marker back: a recorded message would have leaked it.
        expect(errors.filter((m) => m.includes(MARK)).length).toBeGreaterThan(3);
        expect(telemetry.spans().length).toBeGreaterThan(30);
        expect(telemetry.spans().some((s) => s.events.length > 0)).toBe(true);
        expect(exported(telemetry)).not.toContain(MARK);
        const metrics = JSON.stringify(
          [...(await telemetry.metrics()).values()].map((m) => [m.descriptor, m.dataPoints]),
        );
        expect(metrics).not.toContain(MARK);
        for (const span of telemetry.spans())
          expect(auditSpan(span, { storeKind: kind, sessionIds })).toEqual([]);
        await telemetry.shutdown();
      });
    }
  }

  it('the audit itself finds text in a span (it can fail)', async () => {
    const telemetry = new RecordingTelemetry();
    const span = telemetry.tracerProvider.getTracer('t').startSpan('sessionkit.load');
    span.setAttributes({
      'sessionkit.operation': 'load',
      'sessionkit.store.kind': 'memory',
      'sessionkit.session.id': 'abc',
      'sessionkit.messages.read': marked('text'),
      'message.text': 'hello',
    });
    span.recordException(new Error(marked('quoted')));
    span.setStatus({ code: 2, message: marked('status') });
    span.end();
    const problems = auditSpan(telemetry.spans()[0]!, { storeKind: 'memory', sessionIds: false });
    expect(problems).toEqual([
      expect.stringContaining('sessionkit.session.id'),
      expect.stringContaining('sessionkit.messages.read'),
      expect.stringContaining('unknown attribute message.text'),
      expect.stringContaining('event exception'),
      expect.stringContaining('status message'),
    ]);
    await telemetry.shutdown();
  });
});
