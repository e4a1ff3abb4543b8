//! The Lua scripts: each is one atomic step in Redis, run with `EVALSHA` (loaded again by the
//! client if Redis answers `NOSCRIPT`, e.g. after a restart).
//!
//! **Nothing is written until every key is read and validated.** Redis does not roll a script
//! back: a command that errors after another wrote leaves that write in place. So each script
//! first checks the type of every key it will write (a key of the wrong type is an error, before
//! any write) and reads every value; only then writes, with commands that cannot fail on what was
//! read (a malformed value is never written over, only its TTL refreshed). A Redis at
//! `maxmemory` refuses a script only at its first write, so an `OOM` refusal writes nothing
//! either.

use redis::Script;

/// The taint, shared by the scripts. A scope's taint is a SET of label NAMES (every label it
/// was raised to). Its level is the highest of their places in the labels the caller passes
/// (ARGV from `first`: their number, then the names, lowest first), so a changed `labels` never
/// reads a taint lower than it was raised. Read as the top label (255), whatever the labels: a
/// name they no longer hold (a label removed or renamed), the empty name (a raise past the
/// labels), and a key of any other type (an older release's level in digits, a planted value).
/// A raise adds the name to a set, and never writes over a key of another type.
const LABELS: &str = r#"
local function labels_from(first)
  local rank, list = {}, {}
  for i = 1, tonumber(ARGV[first]) do
    local name = ARGV[first + i]
    list[i] = name
    if rank[name] == nil then rank[name] = i - 1 end
  end
  return rank, list
end
local function taint_level(key, kind, rank)
  if kind == 'none' then return 0 end
  if kind ~= 'set' then return 255 end
  local top = 0
  for _, name in ipairs(redis.call('SMEMBERS', key)) do
    local i = rank[name]
    if name == '' or i == nil or i >= 255 then return 255 end
    if i > top then top = i end
  end
  return top
end
local function raise_taint(key, kind, list, raise, ttl)
  if raise >= 0 and (kind == 'none' or kind == 'set') then
    redis.call('SADD', key, list[raise + 1] or '')
  end
  redis.call('PEXPIRE', key, ttl)
end
"#;

/// One decision's [`Settle`](toolgate_core::state::Settle), mirroring `Settle::admits` and
/// `Settle::records`.
///
/// KEYS: 1 taint (set), 2 loop stamps (hash), 3 loop use order (sorted set), 4.. one rate counter
/// per limit (current window).
/// ARGV: 1 now, 2 has_loop, 3 since, 4 loop max, 5 keep, 6 loop window ms, 7 has_sink,
/// 8 sink max, 9 record, 10 enforce, 11 raise (-1: none), 12 session ttl ms, 13 call key,
/// 14 number of rate limits, then per limit: window ms, max; then the labels (see `LABELS`).
/// Returns { loop seen, taint, recorded (0/1), count of each rate limit }.
///
/// Loop counters mirror the in-memory store's: per scope one hash, call key → the timestamps of
/// its last `keep` recorded calls (`t1,t2,…`, recording order), at most 1024 call keys; a sorted
/// set ranks the keys by last use (recorded or counted), and recording a new key into a full
/// hash forgets the least recently used one (its count restarts, as in memory).
const SETTLE: &str = r#"
local MAX_KEYS = 1024
local BIG = 4294967295
-- a stored rate count is plain decimal digits (as INCR writes it); anything else reads as over
-- every limit (and is never incremented: INCR would fail on it)
local function count(raw)
  if not raw then return 0, true end
  if #raw > 10 or not string.match(raw, '^%d+$') then return BIG, false end
  return math.min(tonumber(raw), BIG), true
end
-- a call key's timestamps as written below; nil when malformed
local function stamps(raw)
  local out = {}
  if not raw then return out end
  for s in string.gmatch(raw .. ',', '([^,]*),') do
    if #s == 0 or #s > 15 or not string.match(s, '^%d+$') then return nil end
    out[#out + 1] = s
  end
  return out
end
local function kind(key, want)
  local k = redis.call('TYPE', key).ok
  if k ~= 'none' and k ~= want then
    error('toolgate: a key of type ' .. k .. ' where a ' .. want .. ' was expected; nothing was written')
  end
  return k
end
-- the TTL of `key` is at least `ms` (a key without one gets it)
local function extend(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end

local now = tonumber(ARGV[1])
local has_loop = ARGV[2] == '1'
local has_sink = ARGV[7] == '1'
local n = tonumber(ARGV[14])
local rank, list = labels_from(15 + 2 * n)
local ttl = tonumber(ARGV[12])
local h, o, call = KEYS[2], KEYS[3], ARGV[13]

-- 1. check and read every key; an error here has written nothing
local tkind = redis.call('TYPE', KEYS[1]).ok
if has_loop then
  kind(h, 'hash')
  kind(o, 'zset')
end
for i = 1, n do kind(KEYS[3 + i], 'string') end
local seen, raw, marks = 0, nil, nil
if has_loop then
  raw = redis.call('HGET', h, call)
  marks = stamps(raw)
  if marks == nil then
    seen = BIG
  else
    local since = tonumber(ARGV[3])
    for _, s in ipairs(marks) do
      if tonumber(s) >= since then seen = seen + 1 end
    end
  end
end
local taint = 0
if has_sink then taint = taint_level(KEYS[1], tkind, rank) end
local admit = true
if has_loop and seen >= tonumber(ARGV[4]) then admit = false end
if has_sink and (taint >= 255 or taint > tonumber(ARGV[8])) then admit = false end
local out = { seen, taint, 0 }
local valid = {}
for i = 1, n do
  local c, ok = count(redis.call('GET', KEYS[3 + i]))
  out[3 + i] = c
  valid[i] = ok
  if c >= tonumber(ARGV[14 + 2 * i]) then admit = false end
end
local record = ARGV[9] == '1' and (ARGV[10] == '0' or admit)

-- 2. write
-- a taint read for a sink stays as long as the session is active, refused or not
if has_sink and tkind ~= 'none' then redis.call('PEXPIRE', KEYS[1], ttl) end
if has_loop then
  local keep = tonumber(ARGV[5])
  local write = record and keep > 0 and marks ~= nil
  if raw or write then
    local last = redis.call('ZRANGE', o, -1, -1, 'WITHSCORES')
    local tick = 1
    if last[2] then tick = tonumber(last[2]) + 1 end
    local window = math.max(1, tonumber(ARGV[6]))
    if write then
      if not raw then
        -- a new key in a full hash: the least recently used goes (or, should the order have lost
        -- track of it, any)
        while redis.call('HLEN', h) >= MAX_KEYS do
          local stale = redis.call('ZPOPMIN', o)
          if #stale == 0 then stale = { redis.call('HRANDFIELD', h) } end
          redis.call('HDEL', h, stale[1])
        end
      end
      marks[#marks + 1] = ARGV[1]
      while #marks > keep do table.remove(marks, 1) end
      redis.call('HSET', h, call, table.concat(marks, ','))
    end
    extend(h, window)
    redis.call('ZADD', o, tick, call)
    local extra = redis.call('ZCARD', o) - MAX_KEYS
    if extra > 0 then
      local stale = redis.call('ZPOPMIN', o, extra)
      for i = 1, #stale, 2 do redis.call('HDEL', h, stale[i]) end
    end
    extend(o, math.max(1, redis.call('PTTL', h)))
  end
end
if record then
  out[3] = 1
  raise_taint(KEYS[1], tkind, list, tonumber(ARGV[11]), ttl)
  for i = 1, n do
    local k = KEYS[3 + i]
    if valid[i] and (redis.call('INCR', k) == 1 or redis.call('PTTL', k) < 0) then
      redis.call('PEXPIRE', k, tonumber(ARGV[13 + 2 * i]) + 1000)
    end
  end
end
return out
"#;

/// Raises a taint by ARGV[1] (a label's place; never lowers it) and refreshes its TTL (ARGV[2]
/// ms); the labels from ARGV[3].
const RAISE: &str = r#"
local _, list = labels_from(3)
raise_taint(KEYS[1], redis.call('TYPE', KEYS[1]).ok, list, tonumber(ARGV[1]), tonumber(ARGV[2]))
return 1
"#;

/// Reads a taint as a level of the labels from ARGV[1].
const TAINT: &str = r#"
local rank = labels_from(1)
return taint_level(KEYS[1], redis.call('TYPE', KEYS[1]).ok, rank)
"#;

/// The scripts of a store (their SHA-1s computed once).
#[derive(Debug)]
pub(crate) struct Scripts {
    pub(crate) settle: Script,
    pub(crate) raise: Script,
    pub(crate) taint: Script,
}

impl Scripts {
    pub(crate) fn new() -> Scripts {
        Scripts {
            settle: Script::new(&format!("{LABELS}{SETTLE}")),
            raise: Script::new(&format!("{LABELS}{RAISE}")),
            taint: Script::new(&format!("{LABELS}{TAINT}")),
        }
    }
}
