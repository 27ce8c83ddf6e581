-- Appends one record: numbers it (the room's counter), adds it to the stream and rings the
-- bell. With an owner (a decider's record), only while that node still holds the lease.
-- ARGV[5] is the last record number the proposer applied: past 0 while the counter is gone,
-- Redis lost the room (it restarted without its data) and nothing is appended until an
-- operator re-seeds it (cluster/lua/reseed.lua).
if ARGV[5] ~= '0' and redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('LOST Redis no longer holds this room, which has ' .. ARGV[5] .. ' records')
end
-- Past the counter, the proposer applied records Redis does not hold (a re-seed from a node that
-- was behind): it must take Redis's copy of the room before it writes.
if ARGV[5] ~= '0' and tonumber(redis.call('GET', KEYS[1])) < tonumber(ARGV[5]) then
  return redis.error_reply('BEHIND Redis holds fewer records of this room than the ' .. ARGV[5] .. ' this node applied')
end
if ARGV[2] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[2] then
  return redis.error_reply('NOTOWNER the lease is held by another node')
end
local n = redis.call('INCR', KEYS[1])
local id = redis.call('XADD', KEYS[2], '*', 'n', n, 'r', ARGV[1])
redis.call('PUBLISH', 'anteroom:bell', ARGV[3] .. ' ' .. ARGV[4])
return {id, n}
