// Runs every rule test against every Engine that ships or serves as a yardstick, with a
// manual clock: the sharded engine, the one-mutex yardstick, and the persistent engine (the
// sharded one writing its journal to a log in a temporary directory), which is what the
// server runs. A new engine gets every rule test by one more line in engine_kinds().
#pragma once

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/forwarding_engine.h"
#include "storage/persistent_engine.h"
#include "tests/support/mutex_engine.h"
#include "tests/support/recording_journal.h"
#ifdef ANTEROOM_WITH_CLUSTER
#include "tests/support/two_node_engine.h"
#endif

namespace anteroom::testing {

struct EngineKind {
  const char* name;
  std::unique_ptr<Engine> (*make)(EngineOptions);
};

// The persistent engine in a fresh temporary directory, removed with the engine.
class TempDirEngine final : public ForwardingEngine {
 public:
  TempDirEngine(std::unique_ptr<Engine> e, std::string dir)
      : ForwardingEngine(std::move(e)), dir_(std::move(dir)) {}
  ~TempDirEngine() override { std::filesystem::remove_all(dir_); }

  static std::unique_ptr<Engine> make(EngineOptions o) {
    std::string dir = (std::filesystem::temp_directory_path() / "anteroom-rules-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) return nullptr;
    PersistenceOptions p;
    p.dir = dir;
    p.sync = LogWriter::Sync::kNo;  // the rules, not the disk, are under test here
    auto e = open_persistent_engine(p, o, nullptr);
    if (!e.is_ok()) return nullptr;
    return std::make_unique<TempDirEngine>(std::move(e.value()), dir);
  }

 private:
  std::string dir_;
};

inline std::vector<EngineKind> engine_kinds() {
  return {{"sharded", &make_sharded_engine},
          {"mutex", &make_mutex_engine},
          {"persistent", &TempDirEngine::make}};
}

// The rule suites also run against two cluster nodes on one Redis (a real redis-server).
inline std::vector<EngineKind> rule_kinds() {
  auto kinds = engine_kinds();
#ifdef ANTEROOM_WITH_CLUSTER
  kinds.push_back({"cluster", &TwoNodeEngine::make});
#endif
  return kinds;
}

class EngineTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  void SetUp() override {
    clock_ = std::make_shared<ManualClock>();
    EngineOptions o;
    o.clock = clock_;
    o.shards = 2;
    o.journal = &journal_;
    adjust(o);
    engine_ = GetParam().make(o);
    ASSERT_NE(engine_, nullptr);
  }
  // A suite's own options on top of these.
  virtual void adjust(EngineOptions& o) { (void)o; }

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
  RecordingJournal journal_;  // told every change of engine_ (declared first: outlives it)
  std::unique_ptr<Engine> engine_;
};

inline std::string kind_name(const ::testing::TestParamInfo<EngineKind>& info) {
  return info.param.name;
}

}  // namespace anteroom::testing
