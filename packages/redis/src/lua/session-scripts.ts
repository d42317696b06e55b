// Lua scripts on one session's slot. KEYS are always the five session keys (meta, messages,
// text, status, events) in that order, so every script touches exactly one hash tag.
// The scripts never decide what a write means (core's adapter kit computes every header);
// they only check the write version the header was computed from and write it atomically.

/** Shared Lua: push ARGV[from..] onto a list in chunks (unpack is limited to ~8000 values). */
const PUSH_FROM = `
local function push_from(key, from)
  local last = #ARGV
  local i = from
  while i <= last do
    local j = math.min(i + 999, last)
    redis.call('RPUSH', key, unpack(ARGV, i, j))
    i = j + 1
  end
end
local function expire_all(ttl)
  if ttl > 0 then
    for i = 1, 5 do redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end
`;

/**
 * create: stores a new session unless the meta hash exists.
 * ARGV: header, lineage, parentId ('' none), token, ttlMs, searchText, count, messages…
 * Returns 1 when created, 0 when the id is taken.
 */
export const CREATE = `${PUSH_FROM}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
push_from(KEYS[2], 8)
redis.call('SET', KEYS[3], ARGV[6])
redis.call('HSET', KEYS[1], 'h', ARGV[1], 'r', '1', 'w', '1', 'n', ARGV[7], 'l', ARGV[2], 'p', ARGV[3], 'e', '0', 'o', ARGV[4])
expire_all(tonumber(ARGV[5]))
return 1
`;

/**
 * The write of commit, save, merge and a delete's promotion: applied only when the stored
 * write version `w` is the one the new header was computed from (every write bumps it;
 * a promotion keeps the revision but still moves `w`).
 * ARGV: expectedVersion, token, header, revision (kept in `r` for events), lineage, mode ('append' | 'replace' |
 * 'none'), ttlMs, searchText (appended or replacing), parentId, newCount, updatedAtMs, id,
 * messages… Extra KEYS[6] (standalone only): the listing order, updated in the same step.
 * Returns {3} written, {2} already written by this token (a resent command), {0} missing,
 * {1, header, count, lineage, version, parent} when another write came first (the current state).
 */
export const WRITE = `${PUSH_FROM}
local version = redis.call('HGET', KEYS[1], 'w')
if not version then return {0} end
if redis.call('HGET', KEYS[1], 'o') == ARGV[2] then return {2} end
if version ~= ARGV[1] then
  local cur = redis.call('HMGET', KEYS[1], 'h', 'n', 'l', 'w', 'p')
  return {1, cur[1], cur[2], cur[3], cur[4], cur[5]}
end
local mode = ARGV[6]
if mode == 'append' then
  push_from(KEYS[2], 13)
  redis.call('APPEND', KEYS[3], ARGV[8])
elseif mode == 'replace' then
  redis.call('DEL', KEYS[2])
  push_from(KEYS[2], 13)
  redis.call('SET', KEYS[3], ARGV[8])
end
redis.call('HSET', KEYS[1], 'h', ARGV[3], 'r', ARGV[4], 'n', ARGV[10], 'l', ARGV[5], 'p', ARGV[9], 'o', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'w', 1)
expire_all(tonumber(ARGV[7]))
if #KEYS >= 6 then
  local cur = redis.call('ZSCORE', KEYS[6], ARGV[12])
  if not cur or tonumber(cur) < tonumber(ARGV[11]) then
    redis.call('ZADD', KEYS[6], ARGV[11], ARGV[12])
  end
end
return {3}
`;

/** The stored state without messages: {header, count, lineage, version, parent} or nil. */
export const READ_STATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
return redis.call('HMGET', KEYS[1], 'h', 'n', 'l', 'w', 'p')
`;

/**
 * State and messages `ARGV[1] .. ARGV[2]` (LRANGE indexes, negative from the end) in one
 * snapshot; with ARGV[3] == '1' also the search text. {header, count, lineage,
 * version, parent, messages, text} or nil.
 */
export const READ_MESSAGES = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local s = redis.call('HMGET', KEYS[1], 'h', 'n', 'l', 'w', 'p')
local msgs = {}
if ARGV[2] ~= 'none' then msgs = redis.call('LRANGE', KEYS[2], ARGV[1], ARGV[2]) end
local text = false
if ARGV[3] == '1' then text = redis.call('GET', KEYS[3]) or '' end
return {s[1], s[2], s[3], s[4], s[5], msgs, text}
`;

/**
 * A listing row: {header, count, matched, parent} or nil. ARGV[1] is the lower-cased query
 * ('' for none): matched is 1 when the search text holds it as a plain substring. The
 * transcript (the message list) is never read.
 */
export const SUMMARY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local s = redis.call('HMGET', KEYS[1], 'h', 'n', 'p')
local matched = 0
if ARGV[1] ~= '' then
  local text = redis.call('GET', KEYS[3])
  if text and string.find(text, ARGV[1], 1, true) then matched = 1 end
end
return {s[1], s[2], matched, s[3]}
`;

/** Deletes every key of the session; returns {header, lineage, parent} or nil when missing. */
export const DELETE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local s = redis.call('HMGET', KEYS[1], 'h', 'l', 'p')
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
return {s[1], s[2], s[3]}
`;

/** Stores the runtime status (ARGV[1]) with the session's remaining TTL; 0 when missing. */
export const SAVE_STATUS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[4], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
return 1
`;

/** {exists, status or false}. */
export const LOAD_STATUS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, false} end
return {1, redis.call('GET', KEYS[4]) or false}
`;

/**
 * Appends an event: the next sequence (gapless) and the current revision.
 * ARGV: at (ms), the JSON of {type, payload}. Returns {sequence, revision} or nil.
 */
export const APPEND_EVENT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local seq = redis.call('HINCRBY', KEYS[1], 'e', 1)
local rev = redis.call('HGET', KEYS[1], 'r')
redis.call('RPUSH', KEYS[5], seq .. ' ' .. rev .. ' ' .. ARGV[1] .. '\\n' .. ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[5], ttl) end
return {seq, rev}
`;

/** Events with sequence > ARGV[1], at most ARGV[2] ('-1' all). {exists, entries} */
export const READ_EVENTS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, {}} end
local from = tonumber(ARGV[1])
local stop = -1
if ARGV[2] ~= '-1' then stop = from + tonumber(ARGV[2]) - 1 end
return {1, redis.call('LRANGE', KEYS[5], from, stop)}
`;
