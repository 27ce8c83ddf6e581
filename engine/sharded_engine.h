// The real engine. Each room has one owner at a time (the holder of its owner lock, see
// room.h) that alone admits, expires and journals those changes. Visitors (join, status,
// heartbeat, leave) never wait for that lock: they work on the room's line with atomics
// (see line.h), and a join or leave that needs owner work asks for it without waiting.
// Each shard keeps its rooms' next deadlines, so run_lane() passes only the rooms something
// is due in; each shard also keeps a bounded queue of push hints.
#pragma once

#include <memory>

#include "engine/engine.h"

namespace anteroom {

std::unique_ptr<Engine> make_sharded_engine(EngineOptions options);

}  // namespace anteroom
