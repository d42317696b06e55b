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
 * KEYS: order, pending, children-of-parent (when ARGV[4] is '1'), then the new session's
 * filter indexes. ARGV: score, id, now (ms), '1' | '0'. Registers a create before its
 * session is written: the order and filter entries, the pending mark and the parent link.
 */
export const INDEX_REGISTER = `
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[1], 'GT', ARGV[1], ARGV[2])
local first = 3
if ARGV[4] == '1' then
  redis.call('SADD', KEYS[3], ARGV[2])
  first = 4
end
for i = first, #KEYS do redis.call('ZADD', KEYS[i], 'GT', ARGV[1], ARGV[2]) end
return 1
`;

/**
 * KEYS: filter indexes. ARGV: score, id. On a Cluster, before a write that moves a session
 * into them: the entries exist before the session says it belongs there, so a listing
 * filtered on the new value never misses it (an entry of a write that then fails is
 * skipped by listing: the session does not match it).
 */
export const INDEX_ADD = `
for i = 1, #KEYS do redis.call('ZADD', KEYS[i], 'GT', ARGV[1], ARGV[2]) end
return 1
`;

/**
 * KEYS: sorted index. ARGV: id, score seen. Removes an entry that does not belong in this
 * index any more, only if it still has the score it was seen with (a later write that put
 * it back moved the score).
 */
export const INDEX_UNLINK = `
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if cur and tonumber(cur) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
`;

/** KEYS: sorted indexes. Their sizes (a filtered listing walks the smallest). */
export const INDEX_SIZES = `
local out = {}
for i = 1, #KEYS do out[i] = redis.call('ZCARD', KEYS[i]) end
return out
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
 * After a delete. KEYS: order, pending, children-of-deleted, children-of-its-parent (when
 * ARGV[2] is '1'), then its filter indexes. ARGV: id, '1' | '0'. The entries, the pending
 * mark, its children set and its parent link go.
 */
export const INDEX_FORGET = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
local first = 4
if ARGV[2] == '1' then
  redis.call('SREM', KEYS[4], ARGV[1])
  first = 5
end
for i = first, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1
`;

/** KEYS: children set of the new parent. ARGV: child id. Linked before the child is rewritten. */
export const LINK_CHILD = `
return redis.call('SADD', KEYS[1], ARGV[1])
`;

/**
 * On a Cluster, after the writes of many sessions. KEYS: order, then the filter indexes
 * named. ARGV, per session: score, id, a (count), a KEYS positions to add to, r (count), r
 * KEYS positions to leave. The order entry and the added ones move forward to the score;
 * an index left loses the entry only while its score is not later than this write's (a
 * later write that moved the session back there keeps it).
 */
export const INDEX_SET_MANY = `
local i = 1
while i <= #ARGV do
  local score, id = ARGV[i], ARGV[i + 1]
  redis.call('ZADD', KEYS[1], 'GT', score, id)
  local a = tonumber(ARGV[i + 2])
  for j = i + 3, i + 2 + a do redis.call('ZADD', KEYS[tonumber(ARGV[j])], 'GT', score, id) end
  i = i + 3 + a
  local r = tonumber(ARGV[i])
  for j = i + 1, i + r do
    local key = KEYS[tonumber(ARGV[j])]
    local cur = redis.call('ZSCORE', key, id)
    if cur and tonumber(cur) <= tonumber(score) then redis.call('ZREM', key, id) end
  end
  i = i + 1 + r
end
return 1
`;

/** The store's data format this release writes (`{~ix}:format`): `3`, with filter indexes. */
export const FORMAT = '3';

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
