// Two cluster nodes on one Redis, seen as one Engine, so that every rule test also runs
// against a cluster: writes and reads alternate between the nodes, every write waits until
// both copies applied it, and run_all lets both nodes report what they saw and the room's
// decider propose what is due, then waits until both applied that too.
#pragma once

#include <atomic>
#include <memory>

#include "cluster/cluster_engine.h"
#include "tests/support/redis_server.h"

namespace anteroom::testing {

class TwoNodeEngine final : public Engine {
 public:
  // Null if redis-server or a node does not start.
  static std::unique_ptr<Engine> make(EngineOptions options);
  TwoNodeEngine(std::unique_ptr<RedisServer> redis, std::unique_ptr<cluster::ClusterEngine> a,
                std::unique_ptr<cluster::ClusterEngine> b);
  ~TwoNodeEngine() override;

  Status put_room(std::string_view room, const RoomConfig& config) override;
  Result<RoomInfo> room_info(std::string_view room) const override;
  std::vector<RoomInfo> rooms() const override;
  Status delete_room(std::string_view room) override;
  Result<uint64_t> admit(std::string_view room, uint64_t count) override;
  Result<uint64_t> clear(std::string_view room) override;
  Result<JoinResult> join(std::string_view room, const JoinRequest& request) override;
  Result<TicketView> status(std::string_view room, std::string_view ticket) override;
  Result<TicketView> peek(std::string_view room, std::string_view ticket) const override;
  Status heartbeat(std::string_view room, std::string_view ticket) override;
  Result<TicketDetail> describe(std::string_view room, std::string_view ticket) const override;
  Result<TicketView> leave(std::string_view room, std::string_view ticket) override;
  Result<TicketDetail> activate(std::string_view room, std::string_view ticket) override;
  Status restore_room(std::string_view room, const RoomConfig& config,
                      const std::vector<RestoredTicket>& tickets) override;
  Result<std::vector<RestoredTicket>> export_tickets(std::string_view room) const override;
  Result<DrawInfo> draw(std::string_view room) const override { return next().draw(room); }
  uint64_t config_version() const override { return next().config_version(); }
  void spend(std::string_view key, uint32_t limit, int64_t ttl_ms,
             std::function<void(bool)> then) override {
    next().spend(key, limit, ttl_ms, std::move(then));
  }
  void run_lane(size_t lane) override;  // one lane: both nodes' every lane
  size_t poll_events(std::vector<Event>& out, size_t max) override;
  EngineStats stats() const override;
  const Clock& clock() const override;

 private:
  cluster::ClusterEngine& next() const;
  void both_caught_up();

  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<cluster::ClusterEngine> a_, b_;
  mutable std::atomic<unsigned> turn_{0};
};

}  // namespace anteroom::testing
