// The real engine. Rooms are spread over shards; each shard has one owner at a time (the
// holder of its owner mutex) that alone admits, expires and emits events for the shard's
// rooms. Visitors (join, status, heartbeat) never take that mutex: they work on the room's
// line with atomics (see line.h) and tell the owner what it must know through a
// moodycamel::ConcurrentQueue of commands. Events leave each shard through a queue with a
// single producer token, used only under the owner mutex, so they keep their order.
#pragma once

#include <memory>

#include "engine/engine.h"

namespace anteroom {

std::unique_ptr<Engine> make_sharded_engine(EngineOptions options);

}  // namespace anteroom
