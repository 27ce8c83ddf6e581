// A decorator forwards every call: each virtual method of Engine and of the interfaces it is
// made of, called on a plain ForwardingEngine, reaches the inner engine as that same method
// (an async write as the async write, not the blocking call the defaults make of it). The
// table below must name every virtual method engine/engine.h, room_service.h and
// room_restore.h declare, so a new one fails here until it is forwarded and listed.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/clock.h"
#include "engine/cluster_view.h"
#include "engine/forwarding_engine.h"

namespace anteroom {
namespace {

// Records the name of every method called on it; answers each with a refusal or nothing.
class RecordingEngine final : public Engine {
 public:
  mutable std::vector<std::string> calls;

  Status put_room(std::string_view, const RoomConfig&) override { return note("put_room"); }
  Result<RoomInfo> room_info(std::string_view) const override { return note("room_info"); }
  std::vector<RoomInfo> rooms() const override { return note("rooms"), std::vector<RoomInfo>{}; }
  Status delete_room(std::string_view) override { return note("delete_room"); }
  Result<uint64_t> admit(std::string_view, uint64_t) override { return note("admit"); }
  Result<uint64_t> clear(std::string_view) override { return note("clear"); }
  using Engine::join;
  Result<JoinResult> join(std::string_view, const JoinRequest&) override { return note("join"); }
  Result<TicketView> status(std::string_view, std::string_view) override { return note("status"); }
  Result<TicketView> peek(std::string_view, std::string_view) const override {
    return note("peek");
  }
  Status heartbeat(std::string_view, std::string_view) override { return note("heartbeat"); }
  Result<TicketDetail> describe(std::string_view, std::string_view) const override {
    return note("describe");
  }
  Result<TicketView> leave(std::string_view, std::string_view) override { return note("leave"); }
  Result<TicketDetail> activate(std::string_view, std::string_view) override {
    return note("activate");
  }
  Status restore_room(std::string_view, const RoomConfig&,
                      const std::vector<RestoredTicket>&) override {
    return note("restore_room");
  }
  Result<JoinRules> join_rules(std::string_view) const override { return note("join_rules"); }
  Result<DrawInfo> draw(std::string_view) const override { return note("draw"); }
  Status restore_draw(std::string_view, const DrawInfo&) override { return note("restore_draw"); }
  LaneSchedule::Turn lanes_turn(std::string_view) const override {
    return note("lanes_turn"), LaneSchedule::Turn{true, 1, 2};
  }
  Status restore_lanes_turn(std::string_view, const LaneSchedule::Turn&) override {
    return note("restore_lanes_turn");
  }
  Result<std::vector<RestoredTicket>> export_tickets(std::string_view) const override {
    return note("export_tickets");
  }
  size_t lanes() const override { return note("lanes"), 3; }
  void run_lane(size_t lane) override {
    EXPECT_EQ(lane, 2U);
    note("run_lane");
  }
  int64_t lane_due_ms(size_t lane) const override {
    EXPECT_EQ(lane, 2U);
    return note("lane_due_ms"), 7;
  }
  void set_wake_hook(std::function<void(size_t)>) override { note("set_wake_hook"); }
  uint64_t room_set_version() const override { return note("room_set_version"), 3; }
  uint64_t config_version() const override { return note("config_version"), 4; }
  void spend(std::string_view, uint32_t, int64_t, std::function<void(bool)> then) override {
    note("spend");
    then(true);
  }
  size_t poll_events(std::vector<Event>&, size_t) override { return note("poll_events"), 0; }
  EngineStats stats() const override { return note("stats"), EngineStats{}; }
  const Clock& clock() const override { return note("clock"), clock_; }
  Result<SnapshotInfo> snapshot() override { return note("snapshot"); }
  Status health() const override { return note("health"); }
  void when_durable(uint64_t, std::function<void(Status)> done) override {
    note("when_durable");
    done(Status::ok());
  }
  void join_async(std::string_view, const JoinRequest&, Then<JoinResult> then) override {
    then(note("join_async"));
  }
  void leave_async(std::string_view, std::string_view, Then<TicketView> then) override {
    then(note("leave_async"));
  }
  void activate_async(std::string_view, std::string_view, Then<TicketDetail> then) override {
    then(note("activate_async"));
  }
  void admit_async(std::string_view, uint64_t, Then<uint64_t> then) override {
    then(note("admit_async"));
  }
  void clear_async(std::string_view, Then<uint64_t> then) override { then(note("clear_async")); }
  void put_room_async(std::string_view, const RoomConfig&,
                      std::function<void(Status)> then) override {
    then(note("put_room_async"));
  }
  void delete_room_async(std::string_view, std::function<void(Status)> then) override {
    then(note("delete_room_async"));
  }
  bool when_caught_up(std::string_view, std::string_view, std::function<void()>) override {
    return note("when_caught_up"), true;
  }
  void snapshot_async(Then<SnapshotInfo> then) override { then(note("snapshot_async")); }
  const ClusterView* cluster_view() const override { return note("cluster_view"), &view; }
  ClusterControl* cluster_control() override { return note("cluster_control"), &control; }

  struct View final : ClusterView {
    ClusterInfo cluster_info() const override { return {}; }
  } view;
  struct Control final : ClusterControl {
    void reseed(std::function<void(Result<std::vector<Reseeded>>)>) override {}
  } control;

 private:
  Status note(const char* name) const {
    calls.emplace_back(name);
    return Status(Code::kRoomNotFound, name);
  }
  ManualClock clock_;
};

// Drops an answer (the calls' answers are not under test here) or takes a callback's.
constexpr auto ignore = [](auto&&...) {};

struct Row {
  std::string name;
  std::function<void(Engine&)> call;
};

std::vector<Row> every_call() {
  const RoomConfig c;
  const JoinRequest j;
  const DrawInfo d;
  return {
      {"put_room", [=](Engine& e) { ignore(e.put_room("r", c)); }},
      {"room_info", [](Engine& e) { ignore(e.room_info("r")); }},
      {"rooms", [](Engine& e) { ignore(e.rooms()); }},
      {"delete_room", [](Engine& e) { ignore(e.delete_room("r")); }},
      {"admit", [](Engine& e) { ignore(e.admit("r", 1)); }},
      {"clear", [](Engine& e) { ignore(e.clear("r")); }},
      {"join", [=](Engine& e) { ignore(e.join("r", j)); }},
      {"status", [](Engine& e) { ignore(e.status("r", "t")); }},
      {"peek", [](Engine& e) { ignore(e.peek("r", "t")); }},
      {"heartbeat", [](Engine& e) { ignore(e.heartbeat("r", "t")); }},
      {"describe", [](Engine& e) { ignore(e.describe("r", "t")); }},
      {"leave", [](Engine& e) { ignore(e.leave("r", "t")); }},
      {"activate", [](Engine& e) { ignore(e.activate("r", "t")); }},
      {"restore_room", [=](Engine& e) { ignore(e.restore_room("r", c, {})); }},
      {"join_rules", [](Engine& e) { ignore(e.join_rules("r")); }},
      {"draw", [](Engine& e) { ignore(e.draw("r")); }},
      {"restore_draw", [=](Engine& e) { ignore(e.restore_draw("r", d)); }},
      {"lanes_turn", [](Engine& e) { EXPECT_TRUE(e.lanes_turn("r").taken); }},
      {"restore_lanes_turn", [](Engine& e) { ignore(e.restore_lanes_turn("r", {})); }},
      {"export_tickets", [](Engine& e) { ignore(e.export_tickets("r")); }},
      {"lanes", [](Engine& e) { EXPECT_EQ(e.lanes(), 3U); }},
      {"run_lane", [](Engine& e) { e.run_lane(2); }},
      {"lane_due_ms", [](Engine& e) { EXPECT_EQ(e.lane_due_ms(2), 7); }},
      {"set_wake_hook", [](Engine& e) { e.set_wake_hook([](size_t) {}); }},
      {"room_set_version", [](Engine& e) { EXPECT_EQ(e.room_set_version(), 3U); }},
      {"config_version", [](Engine& e) { EXPECT_EQ(e.config_version(), 4U); }},
      {"spend", [](Engine& e) { e.spend("k", 1, 1000, [](bool) {}); }},
      {"poll_events",
       [](Engine& e) {
         std::vector<Event> out;
         ignore(e.poll_events(out, 1));
       }},
      {"stats", [](Engine& e) { ignore(e.stats()); }},
      {"clock", [](Engine& e) { ignore(e.clock()); }},
      {"snapshot", [](Engine& e) { ignore(e.snapshot()); }},
      {"health", [](Engine& e) { ignore(e.health()); }},
      {"when_durable", [](Engine& e) { e.when_durable(1, [](Status) {}); }},
      {"join_async", [=](Engine& e) { e.join_async("r", j, ignore); }},
      {"leave_async", [=](Engine& e) { e.leave_async("r", "t", ignore); }},
      {"activate_async", [=](Engine& e) { e.activate_async("r", "t", ignore); }},
      {"admit_async", [=](Engine& e) { e.admit_async("r", 1, ignore); }},
      {"clear_async", [=](Engine& e) { e.clear_async("r", ignore); }},
      {"put_room_async", [=](Engine& e) { e.put_room_async("r", c, ignore); }},
      {"delete_room_async", [=](Engine& e) { e.delete_room_async("r", ignore); }},
      {"when_caught_up", [](Engine& e) { EXPECT_TRUE(e.when_caught_up("r", "t", [] {})); }},
      {"snapshot_async", [](Engine& e) { e.snapshot_async(ignore); }},
      {"cluster_view", [](Engine& e) { EXPECT_NE(e.cluster_view(), nullptr); }},
      {"cluster_control", [](Engine& e) { EXPECT_NE(e.cluster_control(), nullptr); }},
  };
}

// The names of the virtual methods the engine's interfaces declare (destructors aside).
std::set<std::string> declared_virtuals() {
  std::set<std::string> names;
  for (const char* header : {"engine.h", "room_service.h", "room_restore.h"}) {
    std::ifstream in(std::string(ANTEROOM_SOURCE_DIR) + "/engine/" + header);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const std::regex decl(R"(\bvirtual\s[^;{(]*?\b(\w+)\s*\()");
    for (auto it = std::sregex_iterator(s.begin(), s.end(), decl); it != std::sregex_iterator();
         ++it) {
      names.insert((*it)[1].str());
    }
  }
  for (const char* destructor : {"Engine", "RoomService", "RoomRestore"}) names.erase(destructor);
  return names;
}

TEST(ForwardingEngine, EveryVirtualMethodIsListedHere) {
  const std::set<std::string> declared = declared_virtuals();
  ASSERT_GT(declared.size(), 30U) << "engine/engine.h was not read";
  std::set<std::string> listed;
  for (const Row& row : every_call()) listed.insert(row.name);
  EXPECT_EQ(listed, declared);
}

TEST(ForwardingEngine, EveryCallReachesTheInnerEngineAsItself) {
  auto inner = std::make_unique<RecordingEngine>();
  RecordingEngine& seen = *inner;
  ForwardingEngine forwarding(std::move(inner));
  for (const Row& row : every_call()) {
    seen.calls.clear();
    row.call(forwarding);
    EXPECT_EQ(seen.calls, std::vector<std::string>{row.name}) << row.name;
  }
}

}  // namespace
}  // namespace anteroom
