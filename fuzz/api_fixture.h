// What the HTTP and WebSocket fuzz targets share: one in-memory engine on a clock that never
// moves and an Api over it, built once per process (the Api's join limiter alone is 32 MiB).
// Each input starts from the same state: reset() deletes every room, frees what the engine
// let go of, and creates the room "fuzz" (capacity 2, so joins both enter and wait).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/clock.h"
#include "engine/epoch.h"
#include "engine/sharded_engine.h"
#include "server/app/api.h"
#include "server/app/metrics.h"
#include "server/app/options.h"
#include "server/app/token.h"

namespace anteroom::fuzz {

// Seeds in fuzz/corpus/ carry these, so operator routes and tokens are reachable.
constexpr const char* kAdminKey = "fuzz-admin-key-0123456789";
constexpr const char* kSecret = "fuzz-token-secret-0123456789abcdefghij";
constexpr const char* kRoom = "fuzz";

class ApiFixture {
 public:
  ApiFixture() : tokens_(kSecret) {
    EngineOptions e;
    e.shards = 1;
    e.max_rooms = 8;  // rooms() walks a table sized for max_rooms, once per input
    e.clock = clock_;
    e.id_key = std::array<uint64_t, 2>{1, 2};  // the same ticket ids on every run
    e.wall_minus_engine_ms = int64_t{1'767'225'600'000} - clock_->now_ms();  // 2026-01-01
    engine_ = make_sharded_engine(e);
    metrics_.read_engine(engine_.get());
    api_ = std::make_unique<Api>(*engine_, tokens_, metrics_, options_, kAdminKey);
  }

  // Back to one empty room "fuzz"; returns the Api to drive.
  const Api& reset() {
    for (const RoomInfo& r : engine_->rooms()) (void)engine_->delete_room(r.name);
    engine_->run_all();
    epoch::drain();  // deleted rooms, freed now: the clock that paces reclaim never moves
    while (engine_->poll_events(events_, 4096) != 0) events_.clear();
    RoomConfig c;
    c.capacity = 2;
    (void)engine_->put_room(kRoom, c);
    return *api_;
  }
  Engine& engine() { return *engine_; }

 private:
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::unique_ptr<Engine> engine_;
  TokenSigner tokens_;
  Metrics metrics_;
  Options options_;
  std::unique_ptr<Api> api_;
  std::vector<Event> events_;  // push hints, read only to be dropped
};

}  // namespace anteroom::fuzz
