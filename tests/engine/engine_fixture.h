// Runs every rule test against both Engine implementations, with a manual clock.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "tests/support/mutex_engine.h"

namespace anteroom::testing {

struct EngineKind {
  const char* name;
  std::unique_ptr<Engine> (*make)(EngineOptions);
};

inline std::vector<EngineKind> engine_kinds() {
  return {{"sharded", &make_sharded_engine}, {"mutex", &make_mutex_engine}};
}

class EngineTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  void SetUp() override {
    clock_ = std::make_shared<ManualClock>();
    EngineOptions o;
    o.clock = clock_;
    o.shards = 2;
    engine_ = GetParam().make(o);
  }

  RoomConfig config(uint32_t capacity, AdmissionMode mode = AdmissionMode::kAuto) {
    RoomConfig c;
    c.capacity = capacity;
    c.admission = mode;
    return c;
  }
  void make_room(const std::string& name, const RoomConfig& c) {
    ASSERT_TRUE(engine_->put_room(name, c).is_ok());
  }
  std::string join(const std::string& room, const std::string& user = "") {
    auto r = engine_->join(room, user);
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    return r.is_ok() ? std::string(id_view(r->ticket.id)) : std::string();
  }
  TicketView peek(const std::string& room, const std::string& ticket) {
    auto r = engine_->peek(room, ticket);
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    return r.is_ok() ? r.value() : TicketView{};
  }
  uint64_t position(const std::string& room, const std::string& ticket) {
    return peek(room, ticket).position;
  }
  TicketState state(const std::string& room, const std::string& ticket) {
    return peek(room, ticket).state;
  }
  std::vector<Event> events() {
    std::vector<Event> out;
    engine_->poll_events(out, 1'000'000);
    return out;
  }

  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<Engine> engine_;
};

inline std::string kind_name(const ::testing::TestParamInfo<EngineKind>& info) {
  return info.param.name;
}

}  // namespace anteroom::testing
