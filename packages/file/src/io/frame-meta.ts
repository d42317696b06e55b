// Reading one frame's meta through a descriptor, without its body.

import { crc32 } from '../format/crc32.js';
import { type FramePrefix, PREFIX_BYTES } from '../format/frame.js';
import type { Fd } from './sync-fd.js';

/** The meta of the frame whose prefix is `prefix` at `offset`, or `undefined` when damaged. */
export async function readFrameMeta<T>(
  handle: Fd,
  prefix: FramePrefix,
  offset: number,
): Promise<T | undefined> {
  const buf = Buffer.alloc(prefix.metaLen);
  await handle.read(buf, 0, prefix.metaLen, offset + PREFIX_BYTES);
  if (crc32(buf) !== prefix.metaCrc) return undefined;
  try {
    return JSON.parse(buf.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}
