// The checksum of every frame part: CRC-32 (IEEE).

import * as zlib from 'node:zlib';

let table: Uint32Array | undefined;
function crcTable(): Uint32Array {
  if (table) return table;
  table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

const nativeCrc = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/** CRC-32 (IEEE) of `data`: node:zlib's where present (Node ≥ 20.15), a table otherwise. */
export function crc32(data: Uint8Array): number {
  if (nativeCrc) return nativeCrc(data) >>> 0;
  return crc32Range(data, 0, data.length);
}

/**
 * CRC-32 (IEEE) of `data[start..end)` by the table, with no view of the bytes: for the
 * 20-byte frame prefixes, where making a view for node:zlib costs more than the sum.
 */
export function crc32Range(data: Uint8Array, start: number, end: number): number {
  const t = crcTable();
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
