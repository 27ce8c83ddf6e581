-- One use of a one-time thing (RoomService::spend): KEYS[1] counts its uses, forgotten
-- ARGV[2] ms after the first; 1 if this use is within ARGV[1] uses, else 0.
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n <= tonumber(ARGV[1]) then return 1 end
return 0
