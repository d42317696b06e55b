// Which Cluster node serves a key, so the reads of many sessions can go as one pipeline
// per node instead of one round trip per session. Redis Cluster's slot of a key is CRC16
// (XMODEM) of its hash tag (the text between the first `{` and the next `}`, when not
// empty) or of the whole key, modulo 16384.
import type { Cluster } from 'ioredis';

const SLOTS = 16384;

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    table[i] = crc;
  }
  return table;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc = ((crc << 8) & 0xffff) ^ (CRC16_TABLE[((crc >> 8) ^ byte) & 0xff] as number);
  }
  return crc;
}

/** The Cluster slot of `key`. */
export function slotOf(key: string): number {
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(Buffer.from(key, 'utf8')) % SLOTS;
}

/**
 * `items` grouped by the node that serves the slot of `keyOf(item)`, as the client's slot
 * map says now (a stale map only costs a redirection). Items whose slot the client has no
 * node for yet are grouped under `''`.
 */
export function groupByNode<T>(
  cluster: Cluster,
  items: readonly T[],
  keyOf: (item: T) => string,
): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const node = cluster.slots[slotOf(keyOf(item))]?.[0] ?? '';
    const group = groups.get(node);
    if (group === undefined) groups.set(node, [item]);
    else group.push(item);
  }
  return groups;
}
