//! The Lua scripts: each is one atomic step in Redis, run with `EVALSHA` (loaded again by the
//! client if Redis answers `NOSCRIPT`, e.g. after a restart).

use redis::Script;

/// Read by both scripts: a stored taint is a label index 0..=255 in plain decimal digits (as the
/// store writes it); anything else (text, `nan`, a negative, fractional, hex or exponent form,
/// which Lua's `tonumber` would read as a number that admits) reads as the top label, so a sink
/// is refused, never admitted, and a raise never "lowers" such a value.
const LABEL: &str = r#"
local function label(raw)
  if not raw then return 0 end
  if type(raw) ~= 'string' or not string.match(raw, '^%d%d?%d?$') then return 255 end
  local t = tonumber(raw)
  if t > 255 then return 255 end
  return t
end
"#;

/// One decision's [`Settle`](toolgate_core::state::Settle), mirroring `Settle::admits` and
/// `Settle::records`.
///
/// KEYS: 1 taint, 2 loop set, 3.. one rate counter per limit (current window).
/// ARGV: 1 now, 2 has_loop, 3 since, 4 loop max, 5 keep, 6 loop window ms, 7 has_sink,
/// 8 sink max, 9 record, 10 enforce, 11 raise (-1: none), 12 session ttl ms, 13 nonce,
/// 14 number of rate limits, then per limit: window ms, max.
/// Returns { loop seen, taint, recorded (0/1), count of each rate limit }.
const SETTLE: &str = r#"
-- a stored rate count is plain decimal digits (as INCR writes it); anything else reads as over
-- every limit
local function count(raw)
  if not raw then return 0 end
  if type(raw) ~= 'string' or #raw > 10 or not string.match(raw, '^%d+$') then return 4294967295 end
  return tonumber(raw)
end
local now = tonumber(ARGV[1])
local has_loop = ARGV[2] == '1'
local has_sink = ARGV[7] == '1'
local n = tonumber(ARGV[14])
local seen = 0
if has_loop then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[3])
  seen = redis.call('ZCARD', KEYS[2])
end
local taint = 0
if has_sink then
  taint = label(redis.call('GET', KEYS[1]))
end
local admit = true
if has_loop and seen >= tonumber(ARGV[4]) then admit = false end
if has_sink and (taint >= 255 or taint > tonumber(ARGV[8])) then admit = false end
local out = { seen, taint, 0 }
for i = 1, n do
  local c = count(redis.call('GET', KEYS[2 + i]))
  out[3 + i] = c
  if c >= tonumber(ARGV[14 + 2 * i]) then admit = false end
end
if ARGV[9] == '1' and (ARGV[10] == '0' or admit) then
  out[3] = 1
  local ttl = tonumber(ARGV[12])
  if has_loop then
    redis.call('ZADD', KEYS[2], now, now .. ':' .. ARGV[13])
    redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[5]) + 1))
    redis.call('PEXPIRE', KEYS[2], math.max(1, tonumber(ARGV[6])))
  end
  local raise = tonumber(ARGV[11])
  local cur = label(redis.call('GET', KEYS[1]))
  if raise > cur then
    redis.call('SET', KEYS[1], raise, 'PX', ttl)
  else
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
  for i = 1, n do
    if redis.call('INCR', KEYS[2 + i]) == 1 then
      redis.call('PEXPIRE', KEYS[2 + i], tonumber(ARGV[13 + 2 * i]) + 1000)
    end
  end
end
return out
"#;

/// Raises a taint to ARGV[1] (never lowers it) and refreshes its TTL (ARGV[2] ms).
const RAISE: &str = r#"
local raise = tonumber(ARGV[1])
local cur = label(redis.call('GET', KEYS[1]))
if raise > cur then
  redis.call('SET', KEYS[1], raise, 'PX', tonumber(ARGV[2]))
else
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 1
"#;

/// The scripts of a store (their SHA-1s computed once).
#[derive(Debug)]
pub(crate) struct Scripts {
    pub(crate) settle: Script,
    pub(crate) raise: Script,
}

impl Scripts {
    pub(crate) fn new() -> Scripts {
        Scripts { settle: Script::new(&format!("{LABEL}{SETTLE}")), raise: Script::new(&format!("{LABEL}{RAISE}")) }
    }
}
