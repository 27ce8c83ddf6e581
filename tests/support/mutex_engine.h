// The yardstick: the obvious implementation of Engine. One std::mutex around everything, a
// std::deque of tickets per room, std::unordered_maps from ticket id and from user to the
// ticket. Same behaviour as ShardedEngine (the rule tests run against both), so every
// benchmark figure can be read as a ratio against it, measured in the same run.
#pragma once

#include <memory>

#include "engine/engine.h"

namespace anteroom {

std::unique_ptr<Engine> make_mutex_engine(EngineOptions options);

}  // namespace anteroom
