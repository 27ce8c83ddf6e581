-- Stores a snapshot only for the lease holder, and only one newer than the stored one (its
-- record number is kept beside it).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local stored = tonumber(redis.call('GET', KEYS[3]) or '0')
if stored >= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SET', KEYS[3], ARGV[2])
return 1
