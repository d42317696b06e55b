// Lua scripts on one session's slot. KEYS are always the ten session keys (meta, messages,
// search texts, status, events, ledger, previous ledger, operations, operation order,
// legacy text) in that order, so every script touches exactly one hash tag.
// The scripts never decide what a write means (core's adapter kit plans every write);
// they only check the write version the plan was made from and write it atomically.
import { MAX_REMEMBERED_OPERATIONS } from '@sessionkit/core';

/** Outcomes one ledger generation holds before it becomes the previous one (so a session remembers its last 256 to 512 writes). */
export const LEDGER_GENERATION = 256;
/**
 * How long a ledger outlives the last write of its session (ms), also after a delete:
 * far longer than any client holds a command to send it again (see the README).
 */
export const LEDGER_TTL_MS = 600_000;
/** The search format this release writes (meta field `x`): one search text per message. */
export const SEARCH_FORMAT = '2';

/**
 * Shared Lua: push ARGV[from..to] onto a list in chunks (unpack is limited to ~8000
 * values); the TTL of the data keys (meta, messages, texts, status, events, operations);
 * the write ledger (KEYS[6] current, KEYS[7] previous generation): token → outcome of every
 * write, so a script that runs a second time (a client re-sending it after a reconnect) or
 * after its outcome was settled finds what the first run did and writes nothing. The
 * previous generation keeps the TTL RENAME carries over: the current one's, refreshed by
 * its last write, so it outlives every outcome it holds by at least the ledger's TTL.
 */
const SHARED = `
local function push_range(key, from, last)
  local i = from
  while i <= last do
    local j = math.min(i + 999, last)
    redis.call('RPUSH', key, unpack(ARGV, i, j))
    i = j + 1
  end
end
local function expire_all(ttl)
  if ttl > 0 then
    for _, i in ipairs({1, 2, 3, 4, 5, 8, 9}) do redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end
local function ledger_find(token)
  return redis.call('HGET', KEYS[6], token) or redis.call('HGET', KEYS[7], token)
end
local function ledger_record(token, outcome)
  if redis.call('HLEN', KEYS[6]) >= ${LEDGER_GENERATION} then redis.call('RENAME', KEYS[6], KEYS[7]) end
  redis.call('HSET', KEYS[6], token, outcome)
  redis.call('PEXPIRE', KEYS[6], ${LEDGER_TTL_MS})
end
`;

/**
 * create: stores a new session unless the meta hash exists; its life token `g` is the
 * create's own token, unique, so a session re-created under the same id is never taken
 * for the one before it (nor remembers its operation ids).
 * ARGV: header, lineage, parentId ('' none), token, ttlMs, parentLife (the life token of
 * the parent it was made under, '' none), count, messages… (count), search texts… (count).
 * Returns the outcome 'c' (created, now or by an earlier run of this token), 'f' (settled
 * as not applied) or 0 when the id is taken.
 */
export const CREATE = `${SHARED}
local done = ledger_find(ARGV[4])
if done then return done end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[8], KEYS[9], KEYS[10])
local n = tonumber(ARGV[7])
push_range(KEYS[2], 8, 7 + n)
push_range(KEYS[3], 8 + n, 7 + 2 * n)
redis.call('HSET', KEYS[1], 'h', ARGV[1], 'r', '1', 'w', '1', 'g', ARGV[4], 'n', ARGV[7], 'l', ARGV[2], 'p', ARGV[3], 'q', ARGV[6], 'e', '0', 'x', '${SEARCH_FORMAT}')
expire_all(tonumber(ARGV[5]))
ledger_record(ARGV[4], 'c')
return 'c'
`;

/**
 * The write of commit, save, merge and a delete's promotion. A run that finds its token
 * in the ledger answers the recorded outcome; the ledger is looked up only when the stored
 * life token `g` and write version `w` are not the ones the plan was made from: every
 * landing of a write moves `w` (a promotion keeps the revision but still moves it), and so
 * does the fence of `SETTLE`, so a run that still finds its planned version cannot have
 * landed or been fenced before (the lookup scans two hashes of up to 256 entries each).
 * A commit naming an operation id the session has recorded writes nothing and answers
 * 'p <revision> <count> <updatedAt>' (the first commit's result) before any version check.
 * Otherwise it is applied only when the life and version are the planned ones. A record
 * stored before life tokens existed has none and matches ''.
 * Messages and their search texts: `replace` the history; `truncate` keeps the first
 * `keep` (LTRIM: the cost grows with what is dropped); then the added ones are pushed.
 * The search texts are kept, trimmed and pushed only while they are this release's, one
 * per message (format `x` current and as many as the messages): otherwise (a session of
 * the previous format the upgrade has not rebuilt, texts lost) pushing or trimming them
 * would pair texts with the wrong messages, so the list is dropped, and the previous
 * format's text too when messages are dropped, and the outcome asks for a rebuild from
 * the messages. A replace or a truncation to nothing makes them current.
 * ARGV: token, expectedLife, expectedVersion, header, revision (kept in `r` for events),
 * lineage, mode ('append' | 'truncate' | 'replace'), ttlMs, keep, parentId, newCount,
 * updatedAtMs, id, operationId ('' none), parentLife ('-' keeps it: only a promotion
 * changes the parent), added count k, filter indexes joined a, messages… (k), texts… (k).
 * Extra KEYS (standalone only), updated in the same step: KEYS[11] the listing order, then
 * the a filter indexes of the written header (the entry moves to its score), then those of
 * the header it was planned over that the written one left (the entry goes).
 * Returns the outcome 'w <version> <revision> <count> <updatedAt> <rebuild>' (written, now
 * or by an earlier run of this token; <rebuild> is '1' when the search texts are left to be
 * rebuilt, '0' otherwise; an outcome recorded before it existed has none), 'p …' (a
 * recorded operation), 'f' (settled as not applied),
 * {0} when the session is missing, {1, header, count, lineage, version, parent, life,
 * parentLife} when another write came first.
 */
export const WRITE = `${SHARED}
local cur = redis.call('HMGET', KEYS[1], 'h', 'n', 'l', 'w', 'p', 'g', 'q', 'x')
local planned = cur[4] == ARGV[3] and (cur[6] or '') == ARGV[2]
if not planned then
  local done = ledger_find(ARGV[1])
  if done then return done end
end
local op = ARGV[14]
if op ~= '' then
  local seen = redis.call('HGET', KEYS[8], op)
  if seen then return 'p ' .. seen end
end
if not cur[4] then return {0} end
if not planned then
  return {1, cur[1], cur[2], cur[3], cur[4], cur[5], cur[6] or '', cur[7] or ''}
end
local mode = ARGV[7]
local keep = tonumber(ARGV[9])
local k = tonumber(ARGV[16])
local current = cur[8] == '${SEARCH_FORMAT}' and redis.call('LLEN', KEYS[3]) == tonumber(cur[2])
if mode == 'replace' or (mode == 'truncate' and keep == 0) then
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[10])
  redis.call('HSET', KEYS[1], 'x', '${SEARCH_FORMAT}')
  current = true
elseif mode == 'truncate' then
  redis.call('LTRIM', KEYS[2], 0, keep - 1)
  if current then
    redis.call('LTRIM', KEYS[3], 0, keep - 1)
  else
    redis.call('DEL', KEYS[3], KEYS[10])
  end
end
push_range(KEYS[2], 18, 17 + k)
if current then
  push_range(KEYS[3], 18 + k, 17 + 2 * k)
elseif k > 0 then
  redis.call('DEL', KEYS[3])
end
redis.call('HSET', KEYS[1], 'h', ARGV[4], 'r', ARGV[5], 'n', ARGV[11], 'l', ARGV[6], 'p', ARGV[10])
if ARGV[15] ~= '-' then redis.call('HSET', KEYS[1], 'q', ARGV[15]) end
local version = redis.call('HINCRBY', KEYS[1], 'w', 1)
if op ~= '' then
  redis.call('HSET', KEYS[8], op, ARGV[5] .. ' ' .. ARGV[11] .. ' ' .. ARGV[12])
  if redis.call('RPUSH', KEYS[9], op) > ${MAX_REMEMBERED_OPERATIONS} then
    redis.call('HDEL', KEYS[8], redis.call('LPOP', KEYS[9]))
  end
end
expire_all(tonumber(ARGV[8]))
if #KEYS >= 11 then
  redis.call('ZADD', KEYS[11], 'GT', ARGV[12], ARGV[13])
  local joined = 11 + tonumber(ARGV[17])
  for i = 12, #KEYS do
    if i <= joined then
      redis.call('ZADD', KEYS[i], 'GT', ARGV[12], ARGV[13])
    else
      redis.call('ZREM', KEYS[i], ARGV[13])
    end
  end
end
local rebuild = '0'
if not current then rebuild = '1' end
local outcome = 'w ' .. version .. ' ' .. ARGV[5] .. ' ' .. ARGV[11] .. ' ' .. ARGV[12] .. ' ' .. rebuild
ledger_record(ARGV[1], outcome)
return outcome
`;

/**
 * Settles a write whose reply was lost: its outcome when the ledger has it, otherwise the
 * token is recorded as 'f' (not applied), so a later run of that write (a command still
 * queued or re-sent by the client) finds it and writes nothing. The fence also moves the
 * session's write version: `WRITE` looks its token up only when the version is not the
 * one it planned from, and no run in flight planned from a version that does not exist
 * yet. ARGV: token.
 */
export const SETTLE = `${SHARED}
local done = ledger_find(ARGV[1])
if done then return done end
if redis.call('HEXISTS', KEYS[1], 'w') == 1 then redis.call('HINCRBY', KEYS[1], 'w', 1) end
ledger_record(ARGV[1], 'f')
return 'f'
`;

/**
 * The stored state without messages: {header, count, lineage, version, parent, life,
 * parentLife, search format, search texts kept, the result recorded for operation id
 * ARGV[1] ('' none) or false} or nil.
 */
export const READ_STATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local s = redis.call('HMGET', KEYS[1], 'h', 'n', 'l', 'w', 'p', 'g', 'q', 'x')
local recorded = false
if ARGV[1] ~= '' then recorded = redis.call('HGET', KEYS[8], ARGV[1]) or false end
return {s[1], s[2], s[3], s[4], s[5], s[6] or '', s[7] or '', s[8] or '', redis.call('LLEN', KEYS[3]), recorded}
`;

/**
 * State and messages ARGV[1] .. ARGV[2] (LRANGE indexes, negative from the end; ARGV[2]
 * 'none' for no messages) in one snapshot; with ARGV[3] == '1' also their search texts.
 * {header, count, lineage, version, parent, life, parentLife, messages, texts or false,
 * search format} or nil.
 */
export const READ_MESSAGES = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local s = redis.call('HMGET', KEYS[1], 'h', 'n', 'l', 'w', 'p', 'g', 'q', 'x')
local msgs = {}
local texts = false
if ARGV[2] ~= 'none' then
  msgs = redis.call('LRANGE', KEYS[2], ARGV[1], ARGV[2])
  if ARGV[3] == '1' then texts = redis.call('LRANGE', KEYS[3], ARGV[1], ARGV[2]) end
elseif ARGV[3] == '1' then
  texts = {}
end
return {s[1], s[2], s[3], s[4], s[5], s[6] or '', s[7] or '', msgs, texts, s[8] or ''}
`;

/**
 * Shared Lua: the listing row of one session, {header, count, matched, parent}, or nil
 * when it does not exist. `query` is the lower-cased query ('' for none): matched is 1 when
 * one message's search text holds it as a plain substring, or, for a session still of the
 * previous format (not yet rebuilt), its one search text does. The transcript (the message
 * list) is never read.
 */
const SUMMARY_OF = `
local function summary_of(meta, texts_key, legacy, query)
  if redis.call('EXISTS', meta) == 0 then return nil end
  local s = redis.call('HMGET', meta, 'h', 'n', 'p', 'x')
  local matched = 0
  if query ~= '' then
    local texts
    if s[4] == '${SEARCH_FORMAT}' then
      texts = redis.call('LRANGE', texts_key, 0, -1)
    else
      texts = {redis.call('GET', legacy) or ''}
    end
    for _, text in ipairs(texts) do
      if string.find(text, query, 1, true) then
        matched = 1
        break
      end
    end
  end
  return {s[1], s[2], matched, s[3]}
end
`;

/** A listing row (`summary_of`) of the session whose keys are KEYS; ARGV[1]: the query. */
export const SUMMARY = `${SUMMARY_OF}
return summary_of(KEYS[1], KEYS[3], KEYS[10], ARGV[1])
`;

/**
 * Standalone Redis only (the keys span slots): the listing rows of many sessions in one
 * call. KEYS: meta, search texts and previous-format text of each session, three by three.
 * ARGV[1]: the query. Returns one entry per session, a row or 0 when it does not exist.
 */
export const SUMMARIES = `${SUMMARY_OF}
local out = {}
for i = 1, #KEYS, 3 do
  out[#out + 1] = summary_of(KEYS[i], KEYS[i + 1], KEYS[i + 2], ARGV[1]) or 0
end
return out
`;

/**
 * Deletes the data keys of the session, its operation ids included (the ledger stays and
 * expires on its own).
 * ARGV: token. Returns the outcome
 * 'd<branchedAtTurn>\n<parent>\n<lineage>\n<life>\n<parentLife>\n<filters>' (what the
 * children's promotion needs; branchedAtTurn '' when absent or the header is unreadable;
 * filters the JSON `[folder, status]` whose indexes held it, '' when unreadable),
 * now or from an earlier run of this token, 'f' (settled as not applied) or nil when missing.
 */
export const DELETE = `${SHARED}
local done = ledger_find(ARGV[1])
if done then return done end
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local s = redis.call('HMGET', KEYS[1], 'h', 'l', 'p', 'g', 'q')
local at = ''
local filters = ''
local ok, header = pcall(cjson.decode, s[1] or '')
if ok and type(header) == 'table' then
  if type(header.branchedAtTurn) == 'number' then at = string.format('%d', header.branchedAtTurn) end
  if type(header.folder) == 'string' and type(header.status) == 'string' then
    filters = cjson.encode({header.folder, header.status})
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[8], KEYS[9], KEYS[10])
local outcome = 'd' .. at .. '\\n' .. (s[3] or '') .. '\\n' .. (s[2] or '') .. '\\n' .. (s[4] or '') .. '\\n' .. (s[5] or '') .. '\\n' .. filters
ledger_record(ARGV[1], outcome)
return outcome
`;

/**
 * Stores the runtime status (ARGV[1]) with the session's remaining TTL. ARGV[2]: token.
 * Returns the outcome 's' (now or from an earlier run), 'f' (settled as not applied) or 0
 * when the session is missing.
 */
export const SAVE_STATUS = `${SHARED}
local done = ledger_find(ARGV[2])
if done then return done end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[4], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
ledger_record(ARGV[2], 's')
return 's'
`;

/** {exists, status or false}. */
export const LOAD_STATUS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, false} end
return {1, redis.call('GET', KEYS[4]) or false}
`;

/**
 * Appends an event: the next sequence (gapless) and the current revision.
 * ARGV: at (ms), the JSON of {type, payload}, token. Returns the outcome
 * 'e <sequence> <revision>' (now or from an earlier run), 'f' (settled as not applied) or
 * nil when the session is missing.
 */
export const APPEND_EVENT = `${SHARED}
local done = ledger_find(ARGV[3])
if done then return done end
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local seq = redis.call('HINCRBY', KEYS[1], 'e', 1)
local rev = redis.call('HGET', KEYS[1], 'r')
redis.call('RPUSH', KEYS[5], seq .. ' ' .. rev .. ' ' .. ARGV[1] .. '\\n' .. ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[5], ttl) end
local outcome = 'e ' .. seq .. ' ' .. rev
ledger_record(ARGV[3], outcome)
return outcome
`;

/** Events with sequence > ARGV[1], at most ARGV[2] ('-1' all). {exists, entries} */
export const READ_EVENTS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, {}} end
local from = tonumber(ARGV[1])
local stop = -1
if ARGV[2] ~= '-1' then stop = from + tonumber(ARGV[2]) - 1 end
return {1, redis.call('LRANGE', KEYS[5], from, stop)}
`;

/**
 * The upgrade and repair(): the search texts of every message (ARGV[3..]) rebuilt from
 * the messages, stored only while the session is still the life (ARGV[1]) and write
 * version (ARGV[2]) they were read at; the previous release's text key goes. Returns 1
 * when it stored them.
 */
export const REBUILD_TEXT = `${SHARED}
local s = redis.call('HMGET', KEYS[1], 'w', 'g')
if not s[1] or s[1] ~= ARGV[2] or (s[2] or '') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[3], KEYS[10])
push_range(KEYS[3], 3, #ARGV)
redis.call('HSET', KEYS[1], 'x', '${SEARCH_FORMAT}')
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 and #ARGV >= 3 then redis.call('PEXPIRE', KEYS[3], ttl) end
return 1
`;
