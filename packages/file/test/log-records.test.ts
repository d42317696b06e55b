// Log records of format 5 that the commit contract's `truncate` and `operationId` write
// (format/records.ts): readers of this format apply a truncation in full reads, and
// windows and folds that meet one read the session whole; an operation id is carried.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { encodeFrame, parseFrames } from '../src/format/frame.js';
import { encodeAppendBody } from '../src/format/message-offsets.js';
import type { LogMeta } from '../src/format/records.js';
import { FileStore } from '../src/index.js';
import { msg, tempFolders } from './helpers.js';

const folders = tempFolders();
const contents = (messages: unknown[]) => messages.map((m) => (m as Message).content);

describe('format-5 log records', () => {
  it('a truncate record keeps the first n messages, then appends; op ids ride along', async () => {
    const dir = folders.storeDir();
    const s = new FileStore({ dir, sync: false });
    await s.create({ id: 't', messages: [msg('a'), msg('b')] });
    await s.commit('t', { append: [msg('c'), msg('d')] });
    await s.close();
    // What a commit `{truncate: 1, append: [x, y], operationId: 'op-1'}` writes.
    const log = join(dir, 'sessions', 't', 'log-1.skr');
    const last = parseFrames<LogMeta>(readFileSync(log)).frames.at(-1)!.meta;
    const appended = encodeAppendBody([msg('x'), msg('y')]);
    const meta: LogMeta = {
      ...last,
      seq: last.seq + 1,
      header: { ...last.header, revision: last.header.revision + 1 },
      messageCount: 3,
      appended: 2,
      sizes: appended.sizes,
      truncate: 1,
      op: 'op-1',
    };
    appendFileSync(log, encodeFrame(meta, appended.body));
    const r = new FileStore({ dir, snapshotEvery: 1 });
    expect(contents((await r.load('t')).messages)).toEqual(['a', 'x', 'y']);
    expect(contents(await r.loadMessages('t', { last: 2 }))).toEqual(['x', 'y']);
    // The next commit folds (snapshotEvery 1) through a full load: the truncation holds.
    await r.commit('t', { expectedRevision: 3, append: [msg('z')] });
    expect(contents(await r.loadMessages('t'))).toEqual(['a', 'x', 'y', 'z']);
    expect(contents(await r.loadMessages('t', { offset: 1, limit: 2 }))).toEqual(['x', 'y']);
    expect((await r.list())[0]).toMatchObject({ messageCount: 4, revision: 4 });
    await r.close();
  });
});
