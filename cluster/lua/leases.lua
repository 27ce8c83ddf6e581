-- Takes or renews the leases of many rooms at once (KEYS: their owner keys, all in one slot
-- on a Redis Cluster): each is taken if nobody holds it, renewed if this node does. Returns
-- 1 or 0 per key, in order.
local out = {}
for i, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    out[i] = 1
  elseif v then
    out[i] = 0
  else
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
    out[i] = 1
  end
end
return out
