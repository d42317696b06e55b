// Format versions (format/version.ts, format/legacy-v1.ts, store/prepare.ts): format 1 read in place,
// format 2 upgraded on open, newer formats refused.
import { cpSync, promises as fsp, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSessionKitError, type Message } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { parseFrames } from '../src/format/frame.js';
import type { SnapshotMeta } from '../src/format/records.js';
import { decodeSearchFile, encodeSearchFile, isChunkedSearch } from '../src/format/search-codec.js';
import { FileStore, FORMAT_VERSION } from '../src/index.js';
import { codeOf, msg, snapshotsOf, tempFolders } from './helpers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const folders = tempFolders();
const fresh = folders.root;
const freshDir = folders.storeDir;
const searchFile = (dir: string, id: string) => join(dir, 'sessions', id, 'search.txt');
/** The search text of session `id` (format 3 plain, or format 4 chunks). */
const searchText = (dir: string, id: string) =>
  decodeSearchFile(readFileSync(searchFile(dir, id))).text;

describe('format versions', () => {
  it('reads a format-1 folder, migrates the index, and upgrades sessions on write', async () => {
    const dir = join(fresh(), 'v1');
    cpSync(join(here, 'fixtures', 'format-v1'), dir, { recursive: true });
    const store = new FileStore({ dir });
    const listed = await store.list({ folder: '/projects/legacy' });
    expect(listed.map((s) => s.id)).toEqual(['old-child', 'old-root']);
    const root = await store.load('old-root');
    expect(root).toMatchObject({
      title: 'Written by format 1',
      revision: 3,
      tokenCount: 42,
      metadata: { origin: 'v1' },
      children: ['old-child'],
    });
    expect(root.updatedAt.toISOString()).toBe('2024-03-01T10:05:00.123Z');
    expect(root.messages).toEqual([
      { role: 'user', content: 'hello from the past' },
      { role: 'assistant', content: 'greetings ✓' },
    ]);
    expect((await store.list({ query: 'FROM THE PAST' })).map((s) => s.id)).toEqual(['old-root']);
    const format = JSON.parse(await fsp.readFile(join(dir, 'format.json'), 'utf8'));
    expect(format).toEqual({ format: 'sessionkit-file', version: FORMAT_VERSION });
    // The first write turns the session into a snapshot + log.
    const r = await store.commit('old-root', {
      expectedRevision: 3,
      append: [{ role: 'user', content: 'new' }],
    });
    expect(r.revision).toBe(4);
    const files = readdirSync(join(dir, 'sessions', 'old-root')).sort();
    expect(files).not.toContain('session.json');
    expect(files.some((f) => f.startsWith('snap-'))).toBe(true);
    expect((await store.loadMessages('old-root')).length).toBe(3);
    // The parent moved past the child's branch point: a merge is refused, nothing written.
    expect(await codeOf(store.merge('old-child'))).toBe('merge_diverged');
    expect(
      (await store.commit('old-child', { append: [{ role: 'user', content: 'x' }] })).revision,
    ).toBe(2);
    expect((await store.load('old-child')).parentId).toBe('old-root');
    await store.close();
  });

  it('refuses a folder written by a newer format, and a folder that is not a store', async () => {
    const dir = join(fresh(), 'future');
    await fsp.mkdir(dir, { recursive: true });
    await fsp.writeFile(
      join(dir, 'format.json'),
      JSON.stringify({ format: 'sessionkit-file', version: 99 }),
    );
    const store = new FileStore({ dir });
    const e = await store.list().catch((err: unknown) => err);
    expect(isSessionKitError(e, 'corrupt')).toBe(true);
    expect((e as Error).message).toMatch(/version 99, newer than/);
    await fsp.writeFile(join(dir, 'format.json'), JSON.stringify({ something: 'else' }));
    expect(await codeOf(new FileStore({ dir }).list())).toBe('invalid_argument');
  });
});

describe('format 2 → 3', () => {
  it('upgrades a format-2 folder written by the previous version', async () => {
    const dir = freshDir();
    cpSync(join(here, 'fixtures', 'format-v2'), dir, { recursive: true });
    const s = new FileStore({ dir });
    // Search text of format 2 separated messages by "\n": a query spanning two matched.
    expect((await s.list({ query: 'one\ntwo' })).map((x) => x.id)).toEqual([]);
    // Parts of one message (the branch copied that message too).
    const within = (await s.list({ query: 'three\nfour' })).map((x) => x.id);
    expect(within).toHaveLength(2);
    expect(within).toContain('v2-root');
    expect(JSON.parse(readFileSync(join(dir, 'format.json'), 'utf8')).version).toBe(FORMAT_VERSION);
    expect(searchText(dir, 'v2-root')).toBe('Ahello oneAtwoAthree\nfourAfiveAsix');
    const root = await s.load('v2-root');
    expect(root).toMatchObject({
      title: 'Format two root',
      revision: 3,
      tokenCount: 10,
      costUsd: 0.5,
      state: { step: 6 },
      metadata: { team: 'a' },
    });
    expect(root.messages).toHaveLength(5);
    expect(root.children).toHaveLength(1);
    expect(await s.events('v2-root')).toHaveLength(1);
    expect(await s.loadRuntimeStatus('v2-root')).toEqual({ busy: false });
    expect(await s.resolve('cli', 'chat', 't', '')).toBe('v2-root');
    // Windows read the old snapshot (no offset table) whole, correctly.
    expect(await s.loadMessageWindow('v2-folded', { last: 2 })).toMatchObject({
      offset: 4,
      messageCount: 6,
      revision: 6,
    });
    // The child has no stored lineage (readLineage(undefined)); the parent moved on.
    expect(await codeOf(s.merge(root.children[0]!))).toBe('merge_diverged');
    // The next write gives the snapshot its offset table and the new metas.
    await s.commit('v2-root', { append: [msg('seven')] });
    const snaps = snapshotsOf(dir, 'v2-root');
    const frames = parseFrames<SnapshotMeta>(readFileSync(snaps.at(-1)!)).frames;
    expect(frames.map((f) => (f.meta as { kind: string }).kind)).toEqual(['snapshot', 'offsets']);
    expect(frames[0]!.meta.lineage).toEqual({ rewrites: 0 });
    expect(
      (await s.loadMessages('v2-root', { offset: 1, limit: 2 })).map((m) => (m as Message).content),
    ).toEqual([
      'two',
      [
        { type: 'text', text: 'three' },
        { type: 'text', text: 'four' },
      ],
    ]);
    expect(searchText(dir, 'v2-root')).toBe('Ahello oneAtwoAthree\nfourAfiveAsixAseven');
    await s.close();
  });
});

describe('format 3 → 4', () => {
  it('upgrades a format-3 folder: its search files are rebuilt as chunks on open', async () => {
    const dir = freshDir();
    cpSync(join(here, 'fixtures', 'format-v3'), dir, { recursive: true });
    const plain = readFileSync(searchFile(dir, 'v3-root'));
    expect(plain.toString('utf8')).toBe('Ahello zebraAgiraffeAokapi'); // format 3: plain text
    const s = new FileStore({ dir });
    expect((await s.list({ query: 'ZEBRA' })).map((x) => x.id)).toEqual(['v3-root']);
    expect((await s.list({ query: 'okapi' })).map((x) => x.id)).toEqual(['v3-root']);
    expect((await s.list({ query: 'zebraagiraffe' })).map((x) => x.id)).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, 'format.json'), 'utf8')).version).toBe(FORMAT_VERSION);
    // Opening rebuilt the search text (format 6 reads message parts), as compressed chunks.
    expect(isChunkedSearch(readFileSync(searchFile(dir, 'v3-root')))).toBe(true);
    expect(searchText(dir, 'v3-root')).toBe('Ahello zebraAgiraffeAokapi');
    expect((await s.list()).map((x) => [x.id, x.messageCount])).toEqual([
      ['v3-empty', 0],
      ['v3-root', 3],
    ]);
    // The next append adds its chunk.
    await s.commit('v3-root', { append: [msg('Quagga')] });
    expect(searchText(dir, 'v3-root')).toBe('Ahello zebraAgiraffeAokapiAquagga');
    for (const query of ['zebra', 'quagga']) {
      expect((await s.list({ query })).map((x) => x.id)).toEqual(['v3-root']);
    }
    await s.commit('v3-empty', { append: [msg('Tapir')] });
    expect(searchText(dir, 'v3-empty')).toBe('Atapir');
    expect((await s.load('v3-root')).messages).toHaveLength(4);
    // repair() finds nothing to fix.
    expect((await s.repair()).indexEntriesFixed).toBe(0);
    await s.close();
  });

  it('repair() compresses the search files a format-3 folder left plain', async () => {
    const dir = freshDir();
    cpSync(join(here, 'fixtures', 'format-v3'), dir, { recursive: true });
    const s = new FileStore({ dir });
    await s.repair();
    expect(isChunkedSearch(readFileSync(searchFile(dir, 'v3-root')))).toBe(true);
    expect(searchText(dir, 'v3-root')).toBe('Ahello zebraAgiraffeAokapi');
    expect((await s.list({ query: 'giraffe' })).map((x) => x.id)).toEqual(['v3-root']);
    await s.close();
  });
  it('opens a folder written by format 4 in place: every part reads, writes go on', async () => {
    const dir = freshDir();
    cpSync(join(here, 'fixtures', 'format-v4'), dir, { recursive: true });
    const s = new FileStore({ dir });
    const listed = await s.list({ includeArchived: true });
    const child = listed.find((x) => x.parentId === 'v4-root');
    expect(listed.map((x) => [x.id, x.messageCount])).toEqual([
      ['v4-empty', 0],
      [child?.id, 5],
      ['v4-root', 8],
    ]);
    expect(JSON.parse(readFileSync(join(dir, 'format.json'), 'utf8')).version).toBe(FORMAT_VERSION);
    const root = await s.load('v4-root');
    expect(root).toMatchObject({
      title: 'Format four root',
      revision: 4,
      turnCount: 3,
      tokenCount: 60,
      metadata: { step: '2' },
      children: [child?.id],
    });
    expect(root.messages.map((m) => m.content)).toEqual([
      'Hello ZEBRA',
      'giraffe',
      'Okapi question',
      'Okapi answer',
      'Narwhal question',
      'Narwhal answer',
      'Quokka question',
      'Quokka answer',
    ]);
    // A window spans the snapshot's offset table and the log.
    expect(
      (await s.loadMessages('v4-root', { offset: 3, limit: 3 })).map((m) => m.content),
    ).toEqual(['Okapi answer', 'Narwhal question', 'Narwhal answer']);
    expect((await s.list({ query: 'narwhal ANSWER' })).map((x) => x.id)).toEqual(['v4-root']);
    expect((await s.list({ query: 'branch only' })).map((x) => x.id)).toEqual([child?.id]);
    expect((await s.events('v4-root')).map((e) => [e.sequence, e.type, e.payload])).toEqual([
      [1, 'tool', { name: 'search', ok: true }],
    ]);
    expect(await s.loadRuntimeStatus('v4-root')).toEqual({ streaming: false, step: 3 });
    expect(await s.resolve('telegram', 'chat-1', '', '')).toBe('v4-root');
    // The branch still merges: its base is the root's history at turn 4, which moved on.
    expect(await codeOf(s.merge(child?.id ?? ''))).toBe('merge_diverged');
    const r = await s.commit('v4-root', { expectedRevision: 4, append: [msg('Tapir')] });
    expect(r).toMatchObject({ revision: 5, messageCount: 9 });
    await s.append('v4-root', 'tool', null);
    expect((await s.events('v4-root')).map((e) => e.sequence)).toEqual([1, 2]);
    expect((await s.list({ query: 'tapir' })).map((x) => x.id)).toEqual(['v4-root']);
    expect((await s.repair()).indexEntriesFixed).toBe(0);
    await s.close();
    const again = new FileStore({ dir });
    expect((await again.load('v4-root')).messages).toHaveLength(9);
    await again.close();
  });

  it('upgrades a format-5 folder: search text written without message parts is rebuilt', async () => {
    const dir = join(fresh(), 'v5');
    const writer = new FileStore({ dir });
    const parts = {
      id: 'ui-1',
      role: 'user',
      parts: [{ type: 'text', text: 'Where do axolotls live?' }],
    };
    await writer.create({ id: 'v5-parts', title: 'Parts', messages: [parts as never] });
    await writer.create({ id: 'v5-plain', messages: [msg('a plain capybara')] });
    await writer.close();
    // What the previous release (format 5) left: its format.json, and search text that
    // knew string `content` and `content[].text` only — nothing of `parts`.
    await fsp.writeFile(
      join(dir, 'format.json'),
      `${JSON.stringify({ format: 'sessionkit-file', version: 5 })}\n`,
    );
    await fsp.writeFile(searchFile(dir, 'v5-parts'), encodeSearchFile(''));
    const store = new FileStore({ dir });
    expect((await store.list({ query: 'axolotls' })).map((s) => s.id)).toEqual(['v5-parts']);
    expect((await store.list({ query: 'capybara' })).map((s) => s.id)).toEqual(['v5-plain']);
    expect(searchText(dir, 'v5-parts')).toContain('where do axolotls live?');
    const format = JSON.parse(await fsp.readFile(join(dir, 'format.json'), 'utf8'));
    expect(format.version).toBe(FORMAT_VERSION);
    // Its sessions go on: a commit with an operation id is remembered across a reopen.
    const op = { operationId: 'after-upgrade', append: [msg('more')] };
    const first = await store.commit('v5-plain', op);
    await store.close();
    const reopened = new FileStore({ dir });
    expect((await reopened.commit('v5-plain', op)).revision).toBe(first.revision);
    expect(await reopened.loadMessages('v5-plain')).toHaveLength(2);
    await reopened.close();
  });
});
