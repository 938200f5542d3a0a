"""The Lua scripts behind ``RedisStore``: each one is a single atomic step on one room.

Every key a script touches carries the room's hash tag (``solrace:{CODE}:...``), so all of
them live in one slot and the scripts run unchanged on Redis Cluster (no CROSSSLOT).

Every script is idempotent *per call*: the caller passes a fresh random token (``op``)
and the script recognises its own earlier success. A call whose reply was lost (timeout,
connection reset) can therefore be sent again — by redis-py's retry or by the caller —
without creating a second room, winning a compare-and-set twice, taking two seats or
appending a move twice. Two writes are not deduplicated, on purpose: a retried
``take_seat`` may skip an epoch number (harmless: the caller holds the newest one) and a
retried publish may deliver an event twice (events carry sequence numbers; receivers
drop repeats).

Values in hashes are MessagePack (one encoded value per field) so a script can compare
them byte for byte; only seat epochs are plain integers (for ``HINCRBY``).
"""

from __future__ import annotations

# KEYS: room. ARGV: op, field, value, field, value...
# Returns 1 when the room was created (now or by an earlier attempt of this call), else 0.
CREATE_ROOM = """
local op = redis.call('HGET', KEYS[1], '_op')
if op then
  if op == ARGV[1] then return 1 end
  return 0
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], '_op', ARGV[1], unpack(ARGV, 2))
return 1
"""

# KEYS: room. ARGV: op, encoded expected phase, encoded new phase, field, value...
# Returns 1 if this call set the phase, else 0 (nothing changed).
SET_PHASE = """
local cur = redis.call('HGET', KEYS[1], 'phase')
if not cur then return 0 end
if cur == ARGV[2] then
  redis.call('HSET', KEYS[1], 'phase', ARGV[3], '_op', ARGV[1], unpack(ARGV, 4))
  return 1
end
if cur == ARGV[3] and redis.call('HGET', KEYS[1], '_op') == ARGV[1] then return 1 end
return 0
"""

# KEYS: room, seats. ARGV: op, encoded 'lobby', max players, epoch, field, value...
# (fields without the seat prefix). Returns the seat number, or 0 (full / not in lobby).
ADD_SEAT = """
local max = tonumber(ARGV[3])
for n = 1, max do
  if redis.call('HGET', KEYS[2], n .. ':_op') == ARGV[1] then return n end
end
if redis.call('HGET', KEYS[1], 'phase') ~= ARGV[2] then return 0 end
for n = 1, max do
  if redis.call('HEXISTS', KEYS[2], n .. ':epoch') == 0 then
    local args = {n .. ':_op', ARGV[1], n .. ':epoch', ARGV[4]}
    for i = 5, #ARGV, 2 do
      args[#args + 1] = n .. ':' .. ARGV[i]
      args[#args + 1] = ARGV[i + 1]
    end
    redis.call('HSET', KEYS[2], unpack(args))
    if redis.call('PTTL', KEYS[2]) == -1 then
      -- the first seat creates the hash: it must not outlive its room
      local ttl = redis.call('PTTL', KEYS[1])
      if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
    end
    return n
  end
end
return 0
"""

# KEYS: room, seats. ARGV: encoded lobby phase, seat number, epoch. Deletes every field
# of the seat if the room is in the lobby and the seat is at that epoch. Returns 1 if it
# did, else 0 (a repeat finds no seat: 0, nothing changed).
REMOVE_SEAT = """
if redis.call('HGET', KEYS[1], 'phase') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[2], ARGV[2] .. ':epoch') ~= ARGV[3] then return 0 end
local prefix = ARGV[2] .. ':'
local fields = {}
for _, f in ipairs(redis.call('HKEYS', KEYS[2])) do
  if string.sub(f, 1, #prefix) == prefix then fields[#fields + 1] = f end
end
redis.call('HDEL', KEYS[2], unpack(fields))
return 1
"""

# KEYS: seats. ARGV: seat number. Returns the new epoch, or 0 if there is no such seat.
TAKE_SEAT = """
if redis.call('HEXISTS', KEYS[1], ARGV[1] .. ':epoch') == 0 then return 0 end
return redis.call('HINCRBY', KEYS[1], ARGV[1] .. ':epoch', 1)
"""

# KEYS: seats. ARGV: seat number, prefixed field, value... Returns 1, or 0 if no such seat.
UPDATE_SEAT = """
if redis.call('HEXISTS', KEYS[1], ARGV[1] .. ':epoch') == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
"""

# The history is trimmed once every HISTORY_TRIM_EVERY events, not at each one: an
# LTRIM is a Redis command per move inside the script (about 1.1 µs of redis-server CPU
# per move with its Lua call, of ~8 µs for the whole APPEND_MOVE: measured with
# INFO commandstats). So the history holds at least ``keep`` events once that many were
# published and at most ``keep + HISTORY_TRIM_EVERY - 1`` (a room's memory stays
# bounded); readers take every entry they get and pick by number, never by position or
# length (``redis_bus.Listener._catch_up``).
HISTORY_TRIM_EVERY = 64

# The body shared by PUBLISH and APPEND_MOVE: number an event, keep it in the room's
# capped history (so a subscriber that missed it — reconnecting — catches up) and publish
# "E:N:event". E names the numbering: it is set with event 1, so if Redis loses the
# room's events (a restart without persistence) the new numbering has a new E.
# Lua variables it reads: counter, history, room (key names), event, channel, sharded
# ('1'/'0'), keep (the fewest events kept: HISTORY_TRIM_EVERY), token (a fresh random
# string).
_PUBLISH_BODY = """
local n = redis.call('HINCRBY', counter, 'n', 1)
if n == 1 then
  redis.call('HSET', counter, 'e', token)
  local ttl = redis.call('PTTL', room)
  if ttl > 0 then
    redis.call('PEXPIRE', counter, ttl)
    redis.call('PEXPIRE', history, ttl)
  end
end
local message = redis.call('HGET', counter, 'e') .. ':' .. n .. ':' .. event
redis.call('RPUSH', history, message)
if n % """ + str(HISTORY_TRIM_EVERY) + """ == 0 then
  redis.call('LTRIM', history, -tonumber(keep), -1)
end
if sharded == '1' then
  redis.call('SPUBLISH', channel, message)
else
  redis.call('PUBLISH', channel, message)
end
"""

# KEYS: event counter (hash: n, e), event history list, room. ARGV: event, channel,
# sharded (1/0), history length, a fresh random token. Numbers the event, keeps it in the
# history and publishes it (``_PUBLISH_BODY``). Returns the event's number.
PUBLISH = """
local counter, history, room = KEYS[1], KEYS[2], KEYS[3]
local event, channel, sharded, keep, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
""" + _PUBLISH_BODY + """
return n
"""

# One move, one script, one round trip (docs/SERVER.md "One move"): the fenced append,
# the seat's new progress fields, and the move's event numbered, kept in the room's
# history and published — all or nothing, so an event is out exactly when its move is
# stored, and a seat's events go out in its sequence order (appends are in that order).
# KEYS: seats, log, event counter, event history, room. ARGV: seat number, epoch, seq,
# encoded entry, move notation, event ('' for none), channel, sharded (1/0), history
# length, a fresh random token, then prefixed seat field, value...
# Returns {0, seq} appended (and the event published); {1, seq} already appended by an
# earlier attempt of this call (same epoch, same seq, same move: a retry whose first
# reply was lost; the event went out with it, so it is not published twice); {-1,
# current epoch} stale epoch; {-2, expected seq} conflict. Nothing changes unless 0.
APPEND_MOVE = """
local cur = redis.call('HGET', KEYS[1], ARGV[1] .. ':epoch')
if not cur then return {-1, 0} end
if cur ~= ARGV[2] then return {-1, tonumber(cur)} end
local len = redis.call('LLEN', KEYS[2])
local seq = tonumber(ARGV[3])
if seq == len + 1 then
  redis.call('RPUSH', KEYS[2], ARGV[4])
  if #ARGV > 10 then redis.call('HSET', KEYS[1], unpack(ARGV, 11)) end
  if len == 0 then
    -- a log created after expire_room must not outlive its room
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
  end
  if ARGV[6] ~= '' then
    local counter, history, room = KEYS[3], KEYS[4], KEYS[5]
    local event, channel, sharded, keep, token = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
""" + _PUBLISH_BODY + """
  end
  return {0, seq}
end
if seq == len and len > 0 then
  local last = cmsgpack.unpack(redis.call('LINDEX', KEYS[2], -1))
  if last[1] == ARGV[5] then return {1, seq} end
end
return {-2, len + 1}
"""

# KEYS: room, results. ARGV: encoded results. The first results stay (every node that
# builds them then publishes the same bytes); they inherit the room's TTL. Returns the
# results stored.
PUT_RESULTS = """
local old = redis.call('GET', KEYS[2])
if old then return old end
redis.call('SET', KEYS[2], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return ARGV[1]
"""

# KEYS: deadlines (a sorted set: member "CODE|kind", score due ms). ARGV: now ms, lease
# until ms, limit. Takes the due members, earliest first, and pushes each to the lease
# end: a claimer that dies leaves the deadline to fall due again. Returns
# {member, due, member, due, ...}.
CLAIM_DEADLINES = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0,
                       tonumber(ARGV[3]))
for i = 1, #due, 2 do redis.call('ZADD', KEYS[1], ARGV[2], due[i]) end
return due
"""

# KEYS: deadlines. ARGV: member, lease end ms. Removes the member if its score is still
# the lease end (it was not set again since the claim). Returns 1 if removed.
DONE_DEADLINE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
"""

# KEYS: room, seats, results, every seat's log. ARGV: op, encoded 'finished', encoded
# 'lobby', number of kept seats K, the K seat numbers, 2M, M (seat field, value) pairs,
# then (room field, value) pairs. A rematch: finished -> lobby with the room fields, the
# results and logs gone, the seats not kept gone, the kept ones reset with the seat
# pairs. Returns 1 if this call did it (now or by an earlier attempt), else 0.
NEW_ROUND = """
local cur = redis.call('HGET', KEYS[1], 'phase')
if not cur then return 0 end
if cur ~= ARGV[2] then
  if cur == ARGV[3] and redis.call('HGET', KEYS[1], '_op') == ARGV[1] then return 1 end
  return 0
end
local nkeep = tonumber(ARGV[4])
local keep = {}
for i = 1, nkeep do keep[ARGV[4 + i]] = true end
local i = 5 + nkeep
local npairs = tonumber(ARGV[i])
for _, f in ipairs(redis.call('HKEYS', KEYS[2])) do
  local n = string.match(f, '^(%d+):')
  if n and not keep[n] then redis.call('HDEL', KEYS[2], f) end
end
for n, _ in pairs(keep) do
  if redis.call('HEXISTS', KEYS[2], n .. ':epoch') == 1 and npairs > 0 then
    local args = {}
    for j = i + 1, i + npairs, 2 do
      args[#args + 1] = n .. ':' .. ARGV[j]
      args[#args + 1] = ARGV[j + 1]
    end
    redis.call('HSET', KEYS[2], unpack(args))
  end
end
for j = 3, #KEYS do redis.call('DEL', KEYS[j]) end
redis.call('HSET', KEYS[1], 'phase', ARGV[3], '_op', ARGV[1], unpack(ARGV, i + npairs + 1))
return 1
"""

# KEYS: every key of the room. ARGV: ttl in seconds.
EXPIRE_ROOM = """
for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, ARGV[1]) end
return 1
"""

# KEYS: event counter, event history list. Returns {E, N, history} in one step.
HISTORY = """
local state = redis.call('HMGET', KEYS[1], 'e', 'n')
return {state[1] or '', tonumber(state[2] or '0'), redis.call('LRANGE', KEYS[2], 0, -1)}
"""

# KEYS: room, seats, cp, cpt. ARGV: seq, clock, checkpoint, seat's "N:epoch" field.
# While the seat exists: replaces the checkpoint at seq and gives both keys the room's
# TTL (as APPEND_MOVE does for the log), so they go with the room.
PUT_CHECKPOINT = """
if redis.call('HEXISTS', KEYS[2], ARGV[4]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[3], ARGV[1], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[2], string.format('%012d', tonumber(ARGV[1])))
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[3], ttl)
  redis.call('PEXPIRE', KEYS[4], ttl)
end
return 1
"""

# The bound shared by the two checkpoint reads. KEYS[2]: cpt (clock -> seq). ARGV[1]: max
# seq, ARGV[2]: max clock ('+inf': no bound). Sets ``s``, the highest seq within both
# (clocks grow with seq within a seat), and ``found``, false when no checkpoint is old
# enough for the clock bound.
_CHECKPOINT_BOUND = """
local s, found = ARGV[1], true
if ARGV[2] ~= '+inf' then
  local r = redis.call('ZREVRANGEBYSCORE', KEYS[2], ARGV[2], '-inf', 'LIMIT', 0, 1)
  if #r == 0 then
    found = false
  elseif s == '+inf' or tonumber(r[1]) < tonumber(s) then
    s = tostring(tonumber(r[1]))
  end
end
"""

# KEYS: cp, cpt. ARGV: max seq, max clock. The latest checkpoint within both, or nil.
GET_CHECKPOINT = _CHECKPOINT_BOUND + """
if not found then return false end
local r = redis.call('ZREVRANGEBYSCORE', KEYS[1], s, '-inf', 'LIMIT', 0, 1)
return r[1] or false
"""

# KEYS: cp, cpt, log. ARGV: max seq, max clock, limit. The latest checkpoint within both
# bounds ('' if none) and up to ``limit`` log entries after it (from the log's start
# without one): a rebuild's two reads in one round trip.
CHECKPOINT_AND_TAIL = _CHECKPOINT_BOUND + """
local cp, seq = '', 0
if found then
  local r = redis.call('ZREVRANGEBYSCORE', KEYS[1], s, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #r > 0 then cp, seq = r[1], tonumber(r[2]) end
end
local limit = tonumber(ARGV[3])
if limit <= 0 then return {cp, {}} end  -- (LRANGE seq seq-1 would be the whole log at 0)
return {cp, redis.call('LRANGE', KEYS[3], seq, seq + limit - 1)}
"""
