#include "tests/support/two_node_engine.h"

namespace anteroom::testing {

std::unique_ptr<Engine> TwoNodeEngine::make(EngineOptions options) {
  auto redis = std::make_unique<RedisServer>();
  if (!redis->running()) return nullptr;
  if (!options.clock) options.clock = std::make_shared<ManualClock>();
  options.journal = nullptr;
  options.id_key = std::array<uint64_t, 2>{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  cluster::ClusterOptions c;
  c.redis_port = redis->port();
  c.secret_check = "test-secret";
  c.node_name = "a";
  auto a = cluster::open_cluster_engine(c, options);
  c.node_name = "b";
  auto b = cluster::open_cluster_engine(c, options);
  if (!a.is_ok() || !b.is_ok()) return nullptr;
  return std::make_unique<TwoNodeEngine>(std::move(redis), std::move(a.value()),
                                         std::move(b.value()));
}

TwoNodeEngine::TwoNodeEngine(std::unique_ptr<RedisServer> redis,
                             std::unique_ptr<cluster::ClusterEngine> a,
                             std::unique_ptr<cluster::ClusterEngine> b)
    : redis_(std::move(redis)), a_(std::move(a)), b_(std::move(b)) {}

TwoNodeEngine::~TwoNodeEngine() {
  a_.reset();
  b_.reset();
}

cluster::ClusterEngine& TwoNodeEngine::next() const {
  return (turn_.fetch_add(1, std::memory_order_relaxed) & 1) == 0 ? *a_ : *b_;
}

void TwoNodeEngine::both_caught_up() {
  a_->catch_up();
  b_->catch_up();
}

Status TwoNodeEngine::put_room(std::string_view room, const RoomConfig& config) {
  Status st = next().put_room(room, config);
  both_caught_up();
  return st;
}
Result<RoomInfo> TwoNodeEngine::room_info(std::string_view room) const {
  return next().room_info(room);
}
std::vector<RoomInfo> TwoNodeEngine::rooms() const { return next().rooms(); }
Status TwoNodeEngine::delete_room(std::string_view room) {
  Status st = next().delete_room(room);
  both_caught_up();
  return st;
}
Result<uint64_t> TwoNodeEngine::admit(std::string_view room, uint64_t count) {
  // Reports flow all the time in a running cluster: an admission knows who was seen.
  a_->report_seen();
  b_->report_seen();
  auto r = next().admit(room, count);
  both_caught_up();
  return r;
}
Result<uint64_t> TwoNodeEngine::clear(std::string_view room) {
  auto r = next().clear(room);
  both_caught_up();
  return r;
}
Result<JoinResult> TwoNodeEngine::join(std::string_view room, const JoinRequest& request) {
  auto r = next().join(room, request);
  both_caught_up();
  return r;
}
Result<TicketView> TwoNodeEngine::status(std::string_view room, std::string_view ticket) {
  return next().status(room, ticket);
}
Result<TicketView> TwoNodeEngine::peek(std::string_view room, std::string_view ticket) const {
  return next().peek(room, ticket);
}
Status TwoNodeEngine::heartbeat(std::string_view room, std::string_view ticket) {
  return next().heartbeat(room, ticket);
}
Result<TicketDetail> TwoNodeEngine::describe(std::string_view room, std::string_view ticket) const {
  return next().describe(room, ticket);
}
Result<TicketView> TwoNodeEngine::leave(std::string_view room, std::string_view ticket) {
  auto r = next().leave(room, ticket);
  both_caught_up();
  return r;
}
Result<TicketDetail> TwoNodeEngine::activate(std::string_view room, std::string_view ticket) {
  auto r = next().activate(room, ticket);
  both_caught_up();
  return r;
}
Status TwoNodeEngine::restore_room(std::string_view room, const RoomConfig& config,
                                   const std::vector<RestoredTicket>& tickets) {
  return a_->restore_room(room, config, tickets);
}
Result<std::vector<RestoredTicket>> TwoNodeEngine::export_tickets(std::string_view room) const {
  return next().export_tickets(room);
}

void TwoNodeEngine::run_lane(size_t /*lane*/) {
  a_->run_all();
  b_->run_all();
  a_->report_seen();
  b_->report_seen();
  a_->settle();
  b_->settle();
  both_caught_up();
}

size_t TwoNodeEngine::poll_events(std::vector<Event>& out, size_t max) {
  return a_->poll_events(out, max);
}
EngineStats TwoNodeEngine::stats() const { return a_->stats(); }
const Clock& TwoNodeEngine::clock() const { return a_->clock(); }

}  // namespace anteroom::testing
