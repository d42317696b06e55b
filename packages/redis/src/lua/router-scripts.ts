// Lua scripts on the router slot `{~rt}`. Binding times come from one strictly increasing
// clock (`max(now, last + 1)`), so `recent()` orders bindings exactly as they were made.

const CLOCK = `
local function next_time(clock, now)
  local last = tonumber(redis.call('GET', clock) or '0')
  local t = tonumber(now)
  if t <= last then t = last + 1 end
  redis.call('SET', clock, t)
  return t
end
`;

/**
 * KEYS: bindings, recent, clock, boundTo(new session), boundTo prefix is ARGV[4].
 * ARGV: tuple key, session id, now, boundTo key prefix. Returns the binding time.
 */
export const BIND = `${CLOCK}
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and old ~= ARGV[2] then redis.call('SREM', ARGV[4] .. old, ARGV[1]) end
local t = next_time(KEYS[3], ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], t, ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
return t
`;

/** KEYS: bindings, recent. ARGV: tuple key, boundTo prefix, session id ('' any). */
export const UNBIND = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
if ARGV[3] ~= '' and old ~= ARGV[3] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', ARGV[2] .. old, ARGV[1])
return 1
`;

/** KEYS: bindings, recent, clock. ARGV: tuple key, now. Bumps an existing binding. */
export const TOUCH = `${CLOCK}
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], next_time(KEYS[3], ARGV[2]), ARGV[1])
return 1
`;

/**
 * KEYS: follows. ARGV: follow key, target ('' clears), pinnedTo prefix, pin (1 when the
 * target is a session id).
 */
export const FOLLOW = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then redis.call('SREM', ARGV[3] .. old, ARGV[1]) end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  if ARGV[4] == '1' then redis.call('SADD', ARGV[3] .. ARGV[2], ARGV[1]) end
end
return 1
`;

/** KEYS: follows, bindings. ARGV: follow key, tuple key. {follow target or false, bound id or false} */
export const RESOLVE = `
return {redis.call('HGET', KEYS[1], ARGV[1]) or false, redis.call('HGET', KEYS[2], ARGV[2]) or false}
`;

/** KEYS: recent, bindings. ARGV: limit. {tuple, score, session id, …} newest first. */
export const RECENT = `
local rows = redis.call('ZRANGE', KEYS[1], '+inf', '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(ARGV[1]), 'WITHSCORES')
local out = {}
for i = 1, #rows, 2 do
  local sid = redis.call('HGET', KEYS[2], rows[i])
  if sid then
    out[#out + 1] = rows[i]
    out[#out + 1] = rows[i + 1]
    out[#out + 1] = sid
  end
end
return out
`;

/**
 * After a delete. KEYS: bindings, recent, follows, boundTo(id), pinnedTo(id). ARGV: id.
 * Removes the bindings to the session and the follow targets that pin it.
 */
export const FORGET_SESSION = `
for _, tuple in ipairs(redis.call('SMEMBERS', KEYS[4])) do
  if redis.call('HGET', KEYS[1], tuple) == ARGV[1] then
    redis.call('HDEL', KEYS[1], tuple)
    redis.call('ZREM', KEYS[2], tuple)
  end
end
for _, key in ipairs(redis.call('SMEMBERS', KEYS[5])) do
  if redis.call('HGET', KEYS[3], key) == ARGV[1] then redis.call('HDEL', KEYS[3], key) end
end
redis.call('DEL', KEYS[4], KEYS[5])
return 1
`;
