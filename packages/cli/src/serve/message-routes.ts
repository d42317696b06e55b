// One message through a window of one: as stored (JSON), or the bytes of an image it
// holds. Image bytes are served only when they are a raster format the viewer recognises
// from the bytes themselves, whatever media type the message claims (an SVG or an HTML
// page posing as an image would run in the viewer's origin).
import { loadMessageWindow } from '@sessionkit/core';
import { imageOf } from './messages.js';
import { indexSegment, sessionIdParam } from './params.js';
import { HttpError, jsonReply, type Reply } from './reply.js';
import type { RequestContext } from './route-context.js';

const SIGNATURES: { type: string; test: (b: Buffer) => boolean }[] = [
  {
    type: 'image/png',
    test: (b) => b.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')),
  },
  { type: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', test: (b) => /^GIF8[79]a/.test(b.subarray(0, 6).toString('latin1')) },
  {
    type: 'image/webp',
    test: (b) =>
      b.subarray(0, 4).toString('latin1') === 'RIFF' &&
      b.subarray(8, 12).toString('latin1') === 'WEBP',
  },
  { type: 'image/avif', test: (b) => b.subarray(4, 12).toString('latin1') === 'ftypavif' },
  { type: 'image/bmp', test: (b) => b.subarray(0, 2).toString('latin1') === 'BM' && b.length > 26 },
];

/** The raster image type of `bytes` by their signature, or undefined. */
export function sniffImageType(bytes: Buffer): string | undefined {
  return SIGNATURES.find((s) => s.test(bytes))?.type;
}

async function messageAt(ctx: RequestContext, id: string, index: number): Promise<unknown> {
  const window = await loadMessageWindow(ctx.store, id, { offset: index, limit: 1 });
  if (window.messages.length === 0) {
    throw new HttpError(
      404,
      `session ${id} has ${window.messageCount} messages; there is no message #${index + 1}`,
    );
  }
  return window.messages[0];
}

/** `GET /s/:id/messages/:index`: the message as stored, as JSON. */
export async function rawMessageRoute(
  ctx: RequestContext,
  [rawId = '', rawIndex = '']: string[],
): Promise<Reply> {
  const id = sessionIdParam(rawId);
  return jsonReply(await messageAt(ctx, id, indexSegment(rawIndex, 'the message position')));
}

/** `GET /s/:id/messages/:index/images/:n`: the bytes of the message's image `n`. */
export async function imageRoute(
  ctx: RequestContext,
  [rawId = '', rawIndex = '', rawImage = '']: string[],
): Promise<Reply> {
  const id = sessionIdParam(rawId);
  const message = await messageAt(ctx, id, indexSegment(rawIndex, 'the message position'));
  const source = imageOf(message, indexSegment(rawImage, 'the image number'));
  if (source?.kind !== 'inline') throw new HttpError(404, 'no image stored in the message there');
  const bytes = Buffer.from(source.base64, 'base64');
  const type = sniffImageType(bytes);
  if (!type)
    throw new HttpError(415, 'the stored image is not a PNG, JPEG, GIF, WebP, AVIF or BMP');
  return {
    status: 200,
    contentType: type,
    body: bytes,
    headers: { 'Cache-Control': 'private, max-age=300', 'Content-Disposition': 'inline' },
  };
}
