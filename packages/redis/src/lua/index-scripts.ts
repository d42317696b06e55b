// Lua scripts on the index slot `{~ix}`. Every session's updatedAt only moves forward, so
// setting an order entry to the larger of the stored and the given score makes index
// writes idempotent and order-independent: a late or repeated write can never move a
// session back.

/** KEYS: order. ARGV: score, id. Sets the entry unless it already holds a later score. */
export const INDEX_SET = `
local cur = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not cur or tonumber(cur) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
`;

/**
 * KEYS: order, pending, children-of-parent (or absent). ARGV: score, id, now (ms).
 * Registers a create before its session is written: the order entry, the pending mark
 * and the parent link.
 */
export const INDEX_REGISTER = `
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
local cur = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not cur or tonumber(cur) < tonumber(ARGV[1]) then redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) end
if #KEYS >= 3 then redis.call('SADD', KEYS[3], ARGV[2]) end
return 1
`;

/** KEYS: pending. ARGV: id. The create finished. */
export const INDEX_UNPEND = `
return redis.call('ZREM', KEYS[1], ARGV[1])
`;

/**
 * KEYS: order, pending. ARGV: id, score seen ('' any). Drops the entry of a session that is
 * gone, only if it still has the score the caller saw (a re-created session keeps its own).
 */
export const INDEX_DROP = `
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if cur and (ARGV[2] == '' or tonumber(cur) == tonumber(ARGV[2])) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
return 0
`;

/**
 * KEYS: order. ARGV: id, score seen, true score. Corrects an entry that disagrees with its
 * session, only if it still has the score the caller saw.
 */
export const INDEX_HEAL = `
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if cur and tonumber(cur) == tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
`;

/** KEYS: children sets. Returns the members of each. */
export const READ_CHILDREN = `
local out = {}
for i = 1, #KEYS do out[i] = redis.call('SMEMBERS', KEYS[i]) end
return out
`;

/**
 * After a delete. KEYS: order, pending, children-of-deleted, children-of-its-parent (or
 * absent). ARGV: id. The entry, the pending mark, its children set and its parent link go.
 */
export const INDEX_FORGET = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
if #KEYS >= 4 then redis.call('SREM', KEYS[4], ARGV[1]) end
return 1
`;

/** KEYS: children set of the new parent. ARGV: child id. Linked before the child is rewritten. */
export const LINK_CHILD = `
return redis.call('SADD', KEYS[1], ARGV[1])
`;

/** KEYS: order. ARGV: score, id, score, id … INDEX_SET for many sessions at once. */
export const INDEX_SET_MANY = `
for i = 1, #ARGV, 2 do
  local cur = redis.call('ZSCORE', KEYS[1], ARGV[i + 1])
  if not cur or tonumber(cur) < tonumber(ARGV[i]) then redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return 1
`;

/** The store's data format this release writes (`{~ix}:format`). */
export const FORMAT = '2';

/**
 * KEYS: format, order, pending. Returns 1 when the store needs no upgrade: its format is
 * this release's, or it holds no session (then the format is set). 0: run the upgrade.
 */
export const FORMAT_CHECK = `
if redis.call('GET', KEYS[1]) == '${FORMAT}' then return 1 end
if redis.call('ZCARD', KEYS[2]) == 0 and redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('SET', KEYS[1], '${FORMAT}')
  return 1
end
return 0
`;
