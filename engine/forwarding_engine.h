// An Engine that passes every call to another one: the base of decorators (storage's
// persistent engine) that change a few calls and keep the rest. Every virtual method of
// Engine and of the interfaces it is made of (room_service.h, room_restore.h) is forwarded,
// the async writes to the inner engine's async writes, the cluster view to the inner one's
// (tests/engine/forwarding_engine_test.cc fails when one is not).
//
// Thread safety: as the engine it wraps.
#pragma once

#include <memory>
#include <utility>

#include "engine/engine.h"

namespace anteroom {

class ForwardingEngine : public Engine {
 public:
  explicit ForwardingEngine(std::unique_ptr<Engine> inner) : inner_(std::move(inner)) {}

  Status put_room(std::string_view room, const RoomConfig& config) override {
    return inner_->put_room(room, config);
  }
  Result<RoomInfo> room_info(std::string_view room) const override {
    return inner_->room_info(room);
  }
  std::vector<RoomInfo> rooms() const override { return inner_->rooms(); }
  Status delete_room(std::string_view room) override { return inner_->delete_room(room); }
  Result<uint64_t> admit(std::string_view room, uint64_t count) override {
    return inner_->admit(room, count);
  }
  Result<uint64_t> clear(std::string_view room) override { return inner_->clear(room); }
  using Engine::join;
  Result<JoinResult> join(std::string_view room, const JoinRequest& request) override {
    return inner_->join(room, request);
  }
  Result<TicketView> status(std::string_view room, std::string_view t) override {
    return inner_->status(room, t);
  }
  Result<TicketView> peek(std::string_view room, std::string_view t) const override {
    return inner_->peek(room, t);
  }
  Status heartbeat(std::string_view room, std::string_view t) override {
    return inner_->heartbeat(room, t);
  }
  Result<TicketDetail> describe(std::string_view room, std::string_view t) const override {
    return inner_->describe(room, t);
  }
  Result<TicketView> leave(std::string_view room, std::string_view t) override {
    return inner_->leave(room, t);
  }
  Result<TicketDetail> activate(std::string_view room, std::string_view t) override {
    return inner_->activate(room, t);
  }
  Status restore_room(std::string_view room, const RoomConfig& c,
                      const std::vector<RestoredTicket>& t) override {
    return inner_->restore_room(room, c, t);
  }
  Result<DrawInfo> draw(std::string_view room) const override { return inner_->draw(room); }
  Result<JoinRules> join_rules(std::string_view room) const override {
    return inner_->join_rules(room);
  }
  LaneSchedule::Turn lanes_turn(std::string_view room) const override {
    return inner_->lanes_turn(room);
  }
  Status restore_lanes_turn(std::string_view room, const LaneSchedule::Turn& turn) override {
    return inner_->restore_lanes_turn(room, turn);
  }
  Status restore_draw(std::string_view room, const DrawInfo& draw) override {
    return inner_->restore_draw(room, draw);
  }
  Result<std::vector<RestoredTicket>> export_tickets(std::string_view room) const override {
    return inner_->export_tickets(room);
  }
  size_t lanes() const override { return inner_->lanes(); }
  void run_lane(size_t lane) override { inner_->run_lane(lane); }
  int64_t lane_due_ms(size_t lane) const override { return inner_->lane_due_ms(lane); }
  void set_wake_hook(std::function<void(size_t)> wake) override {
    inner_->set_wake_hook(std::move(wake));
  }
  uint64_t room_set_version() const override { return inner_->room_set_version(); }
  uint64_t config_version() const override { return inner_->config_version(); }
  void spend(std::string_view key, uint32_t limit, int64_t ttl_ms,
             std::function<void(bool)> then) override {
    inner_->spend(key, limit, ttl_ms, std::move(then));
  }
  size_t poll_events(std::vector<Event>& out, size_t max) override {
    return inner_->poll_events(out, max);
  }
  EngineStats stats() const override { return inner_->stats(); }
  const Clock& clock() const override { return inner_->clock(); }
  Result<SnapshotInfo> snapshot() override { return inner_->snapshot(); }
  Status health() const override { return inner_->health(); }
  void when_durable(uint64_t position, std::function<void(Status)> done) override {
    inner_->when_durable(position, std::move(done));
  }
  // The writes answered when done go to the inner engine's own (a cluster node's answer
  // after its round trip): the defaults would turn them into the blocking calls above. A
  // decorator that changes a write changes both forms (see PersistentEngine's join).
  void join_async(std::string_view room, const JoinRequest& r, Then<JoinResult> then) override {
    inner_->join_async(room, r, std::move(then));
  }
  void leave_async(std::string_view room, std::string_view t, Then<TicketView> then) override {
    inner_->leave_async(room, t, std::move(then));
  }
  void activate_async(std::string_view room, std::string_view t, Then<TicketDetail> then) override {
    inner_->activate_async(room, t, std::move(then));
  }
  void admit_async(std::string_view room, uint64_t count, Then<uint64_t> then) override {
    inner_->admit_async(room, count, std::move(then));
  }
  void clear_async(std::string_view room, Then<uint64_t> then) override {
    inner_->clear_async(room, std::move(then));
  }
  void put_room_async(std::string_view room, const RoomConfig& c,
                      std::function<void(Status)> then) override {
    inner_->put_room_async(room, c, std::move(then));
  }
  void delete_room_async(std::string_view room, std::function<void(Status)> then) override {
    inner_->delete_room_async(room, std::move(then));
  }
  bool when_caught_up(std::string_view room, std::string_view t,
                      std::function<void()> done) override {
    return inner_->when_caught_up(room, t, std::move(done));
  }
  void snapshot_async(Then<SnapshotInfo> then) override { inner_->snapshot_async(std::move(then)); }
  const ClusterView* cluster_view() const override { return inner_->cluster_view(); }
  ClusterControl* cluster_control() override { return inner_->cluster_control(); }

 protected:
  Engine& inner() const { return *inner_; }

 private:
  std::unique_ptr<Engine> inner_;
};

}  // namespace anteroom
