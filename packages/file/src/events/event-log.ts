// A session's event log (`events.skr`): framed event records with gapless sequences,
// appended under the session lock.

import { promises as fsp } from 'node:fs';
import type { JsonValue, SessionEvent } from '@sessionkit/core';
import { planEvent } from '@sessionkit/core/adapter';
import { encodeFrame, frameBody, parseFrames } from '../format/frame.js';
import type { EventMeta } from '../format/records.js';
import { FORMAT_VERSION } from '../format/version.js';
import { isEnoent } from '../io/fs-helpers.js';
import { openFd } from '../io/sync-fd.js';
import { assertSessionExists } from '../session/folder.js';
import { readSessionTip } from '../session/tip.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';

/**
 * Appends an event (fsync'd) by the kit's `planEvent` (the next sequence, the session's
 * revision, now), cutting off a torn final record first. The caller holds the session
 * lock; `payload` is the validated copy.
 */
export async function appendEvent(
  ctx: StoreContext,
  id: string,
  type: string,
  payload: JsonValue,
): Promise<SessionEvent> {
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const tip = await readSessionTip(ctx, id, 'writer');
  const path = ctx.sessionPaths(id).events;
  const handle = openFd(path, 'a', 0o600);
  try {
    const st = await handle.stat();
    const last = await lastEventSequence(ctx, id, path, Number(st.ino), st.size);
    const event = planEvent(tip.header.revision, last.sequence, type, payload);
    const meta: EventMeta = {
      v: FORMAT_VERSION,
      sequence: event.sequence,
      revision: event.revision,
      at: event.at.getTime(),
      type,
    };
    if (last.validEnd < st.size) await handle.truncate(last.validEnd);
    const frame = encodeFrame(meta, body);
    await handle.write(frame);
    if (ctx.options.sync) await handle.datasync();
    ctx.eventTails.set(id, {
      ino: Number(st.ino),
      size: last.validEnd + frame.length,
      sequence: meta.sequence,
    });
    return event;
  } finally {
    await handle.close();
  }
}

/**
 * The last sequence in the event log and where its good records end: from this store's
 * cache when the file is the one it last wrote (same inode and size), else read.
 */
async function lastEventSequence(
  ctx: StoreContext,
  id: string,
  path: string,
  ino: number,
  size: number,
): Promise<{ sequence: number; validEnd: number }> {
  const cached = ctx.eventTails.get(id);
  if (cached && cached.ino === ino && cached.size === size) {
    return { sequence: cached.sequence, validEnd: size };
  }
  if (size === 0) return { sequence: 0, validEnd: 0 };
  const buf = await fsp.readFile(path);
  const parsed = parseFrames<EventMeta>(buf);
  if (parsed.corrupt) throw errors.corrupt(id, `events.skr: ${parsed.corrupt}`);
  const last = parsed.frames[parsed.frames.length - 1];
  return { sequence: last?.meta.sequence ?? 0, validEnd: parsed.validEnd };
}

/**
 * Events after `afterSequence` in order, at most `limit`. A torn final record is
 * ignored; a damaged record followed by more → `corrupt`. Throws `not_found`.
 */
export async function readEvents(
  ctx: StoreContext,
  id: string,
  afterSequence: number,
  limit: number | undefined,
): Promise<SessionEvent[]> {
  await assertSessionExists(ctx, id);
  let buf: Buffer;
  try {
    buf = await fsp.readFile(ctx.sessionPaths(id).events);
  } catch (e) {
    if (!isEnoent(e)) throw e;
    await assertSessionExists(ctx, id);
    return [];
  }
  const parsed = parseFrames<EventMeta>(buf);
  if (parsed.corrupt) throw errors.corrupt(id, `events.skr: ${parsed.corrupt}`);
  const out: SessionEvent[] = [];
  for (const f of parsed.frames) {
    if (f.meta.sequence <= afterSequence) continue;
    out.push({
      sequence: f.meta.sequence,
      revision: f.meta.revision,
      at: new Date(f.meta.at),
      type: f.meta.type,
      payload: (frameBody(buf, f) ?? null) as JsonValue,
    });
    if (limit !== undefined && out.length >= limit) break;
  }
  return out;
}
