-- Re-seeds a room Redis lost (it restarted without its data) from one node's copy: only
-- while the room's record counter is gone. KEYS: the counter, the snapshot, the snapshot's
-- record number; ARGV[1]: the copy's last record number, ARGV[2]: the copy as a snapshot.
-- The next record is numbered after the copy's last, so nodes that applied as much go on,
-- and nodes behind reload from the snapshot. 1 if re-seeded, 0 if Redis has the room.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SET', KEYS[3], ARGV[1])
return 1
