// The record frame's checks, byte by byte: a flipped byte anywhere in a frame followed by
// more data is corruption (named by the part it hit), in the last frame a torn append; the
// visitor form sees exactly the frames the array form returns.
import { describe, expect, it } from 'vitest';
import { crc32 } from '../src/format/crc32.js';
import {
  encodeFrame,
  FRAME_MAGIC,
  frameBody,
  PREFIX_BYTES,
  parseFrames,
  scanFrames,
  TAIL_BYTES,
  TAIL_MAGIC,
} from '../src/format/frame.js';

const frames = [
  encodeFrame({ op: 'put', title: 'first' }, Buffer.from('[1,2]')),
  encodeFrame({ op: 'put', title: 'zweite – ü' }, Buffer.from('["ß"]')),
  encodeFrame({ op: 'del', id: 'third' }),
];
const whole = Buffer.concat(frames);
const second = frames[0]!.length;
const third = second + frames[1]!.length;

/** `buf` with the byte at `at` flipped. */
function flipped(buf: Buffer, at: number): Buffer {
  const out = Buffer.from(buf);
  out[at]! ^= 0x40;
  return out;
}

/** What a flip at offset `i` of the second frame must be reported as. */
function partAt(i: number): RegExp {
  const metaLen = frames[1]!.readUInt32LE(4);
  const bodyLen = frames[1]!.readUInt32LE(8);
  if (i < PREFIX_BYTES) return /bad record header at byte/;
  if (i < PREFIX_BYTES + metaLen) return /meta checksum mismatch in the record at byte/;
  if (i < PREFIX_BYTES + metaLen + bodyLen) return /body checksum mismatch in the record at byte/;
  return /bad record trailer in the record at byte/;
}

describe('parseFrames', () => {
  it('parses every frame with its offsets and bodies', () => {
    const parsed = parseFrames(whole);
    expect(parsed).toMatchObject({ validEnd: whole.length, torn: false });
    expect(parsed.corrupt).toBeUndefined();
    expect(parsed.frames.map((f) => f.meta)).toEqual([
      { op: 'put', title: 'first' },
      { op: 'put', title: 'zweite – ü' },
      { op: 'del', id: 'third' },
    ]);
    expect(parsed.frames.map((f) => [f.start, f.end])).toEqual([
      [0, second],
      [second, third],
      [third, whole.length],
    ]);
    expect(parsed.frames.map((f) => frameBody(whole, f))).toEqual([[1, 2], ['ß'], undefined]);
  });

  it('reports a flipped byte anywhere in a frame before more data as corruption', () => {
    for (let i = 0; i < frames[1]!.length; i++) {
      const parsed = parseFrames(flipped(whole, second + i));
      expect(parsed.corrupt, `byte ${i}`).toMatch(partAt(i));
      expect(parsed.corrupt, `byte ${i}`).toContain(`at byte ${second}`);
      expect(parsed.frames.length, `byte ${i}`).toBe(1);
      expect(parsed.validEnd, `byte ${i}`).toBe(second);
      expect(parsed.torn).toBe(false);
    }
  });

  it('treats a flipped byte past the prefix of the last frame, a cut one, or zeros after as torn', () => {
    const two = whole.subarray(0, third);
    for (let i = 0; i < frames[1]!.length; i++) {
      const parsed = parseFrames(flipped(two, second + i));
      if (i < PREFIX_BYTES) {
        // A bad prefix is never taken for a torn append, last or not (as before).
        expect(parsed.corrupt, `byte ${i}`).toMatch(/bad record header/);
        continue;
      }
      expect(parsed, `byte ${i}`).toMatchObject({ validEnd: second, torn: true });
      expect(parsed.corrupt, `byte ${i}`).toBeUndefined();
    }
    for (let cut = second + 1; cut < third; cut++) {
      expect(parseFrames(two.subarray(0, cut)), `cut ${cut}`).toMatchObject({
        validEnd: second,
        torn: true,
      });
    }
    const zeros = Buffer.concat([two, Buffer.alloc(100)]);
    expect(parseFrames(zeros)).toMatchObject({ validEnd: third, torn: true });
  });

  it('reports a meta that is not JSON under good checksums', () => {
    const meta = Buffer.from('{"a":}');
    const frame = Buffer.alloc(PREFIX_BYTES + meta.length + TAIL_BYTES);
    frame.writeUInt32LE(FRAME_MAGIC, 0);
    frame.writeUInt32LE(meta.length, 4);
    frame.writeUInt32LE(0, 8);
    frame.writeUInt32LE(crc32(meta), 12);
    frame.writeUInt32LE(crc32(new Uint8Array(0)), 16);
    frame.writeUInt32LE(crc32(frame.subarray(0, 20)), 20);
    meta.copy(frame, PREFIX_BYTES);
    frame.writeUInt32LE(frame.length, frame.length - TAIL_BYTES);
    frame.writeUInt32LE(TAIL_MAGIC, frame.length - 4);
    const parsed = parseFrames(Buffer.concat([frame, frames[0]!]));
    expect(parsed.corrupt).toMatch(/unparsable record meta in the record at byte 0/);
    expect(parseFrames(frame)).toMatchObject({ validEnd: 0, torn: true });
  });

  it('skips body checksums when asked, and reads a Uint8Array at an offset in its buffer', () => {
    const bodyByte = second + PREFIX_BYTES + frames[1]!.readUInt32LE(4);
    expect(parseFrames(flipped(whole, bodyByte), 0, false).frames.length).toBe(3);
    const padded = new Uint8Array(whole.length + 7);
    padded.set(whole, 7);
    const view = new Uint8Array(padded.buffer, 7, whole.length);
    expect(parseFrames(view).frames.map((f) => f.meta)).toEqual(
      parseFrames(whole).frames.map((f) => f.meta),
    );
    expect(parseFrames(whole, second).frames.length).toBe(2);
  });

  it('scanFrames hands the visitor exactly the frames parseFrames returns', () => {
    for (const buf of [whole, flipped(whole, second + 30), whole.subarray(0, third + 5)]) {
      const seen: unknown[] = [];
      const scan = scanFrames(buf, 0, true, (meta, start, end, bodyStart, bodyEnd) =>
        seen.push({ meta, start, end, bodyStart, bodyEnd }),
      );
      const { frames: all, ...rest } = parseFrames(buf);
      expect(seen).toEqual(all);
      expect(scan).toEqual(rest);
    }
  });
});
