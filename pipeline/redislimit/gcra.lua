-- GCRA (generic cell rate algorithm) for one key, on the server's clock.
--
-- KEYS[1]  the key; its value is the theoretical arrival time (TAT) in
--          microseconds of the server's clock
-- ARGV[1]  emission interval T: microseconds between calls at the
--          sustained rate
-- ARGV[2]  tolerance: burst × T
-- ARGV[3]  horizon: how far ahead (microseconds) a call may reserve its
--          turn; 0 reserves nothing (the caller retries)
--
-- Returns {admitted, wait}: {1, 0} go now; {1, w} the turn w microseconds
-- from now is the caller's (it sleeps, then goes, without asking again);
-- {0, w} the call would conform in w microseconds, more than the horizon:
-- nothing was taken, the caller sleeps and asks again.
--
-- Redis converts Lua numbers with 14 significant digits, too few for
-- microseconds since 1970, so the TAT is written with string.format.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local horizon = tonumber(ARGV[3])

local tat = tonumber(redis.call('GET', KEYS[1]) or 0) or 0
if tat < now then
  tat = now
end
local next_tat = tat + interval
local wait = next_tat - tolerance - now
if wait > horizon then
  return {0, math.ceil(wait)}
end
if wait < 0 then
  wait = 0
end
-- The key means something only while its TAT is ahead of the clock; past
-- it, a missing key says the same (a full burst), so it expires then.
local ttl = math.max(1, math.ceil((next_tat - now) / 1000))
redis.call('SET', KEYS[1], string.format('%.0f', next_tat), 'PX', string.format('%d', ttl))
return {1, math.ceil(wait)}
