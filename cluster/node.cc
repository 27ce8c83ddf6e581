#include "cluster/node.h"

#include "cluster/lua_scripts.h"

#include <unistd.h>

#include <boost/asio/post.hpp>
#include <future>
#include <utility>

namespace anteroom::cluster {
namespace asio = boost::asio;

namespace {

std::string default_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + "-" + std::to_string(getpid());
}

}  // namespace

Node::Node(const ClusterOptions& options, EngineOptions engine)
    : options_(options),
      name_(options.node_name.empty() ? default_name() : options.node_name),
      clock_(engine.clock ? engine.clock : std::make_shared<WallClock>()),
      work_(asio::make_work_guard(io_)),
      ticker_(io_),
      reconnect_timer_(io_) {
  // Records carry origin_, not the name alone: an earlier process of the same name (a restart)
  // numbered its batches from 1 too.
  const Tag t = random_tag();
  char hex[32];
  std::snprintf(hex, sizeof hex, "#%08x%08x", t[0], t[1]);
  origin_ = name_ + hex;
  engine.clock = clock_;
  engine.journal = nullptr;
  // Records carry the proposer's clock, which is the wall clock: event times compare with it
  // directly, alike on every node.
  engine.wall_minus_engine_ms = 0;
  // The limit is the proposer's (put_room_async); a copy has room to spare, so that rooms
  // put and deleted at once, applied in another order on another node, never exceed it.
  max_rooms_ = engine.max_rooms;
  engine.max_rooms = engine.max_rooms * 2 + 16;
  if (engine.id_key) codec_.emplace(*engine.id_key);
  replica_ = make_replica_engine(std::move(engine));
  thread_ = std::thread([this] { io_.run(); });
}

Node::~Node() {
  try {
    stop();
  } catch (...) {  // a promise or a thread that cannot be joined: nothing left to do
  }
}

void Node::stop() {
  std::promise<void> stopped;
  post([this, &stopped] {
    stopping_ = true;
    ticker_.cancel();
    reconnect_timer_.cancel();
    if (cmd_) cmd_->close("node stopping");
    if (sub_) sub_->close("node stopping");
    for (auto& [room, r] : rooms_) {
      for (auto& d : r.queue_done) {
        if (d) d(Applied{Status(Code::kUnavailable, "node stopping"), {}, {}, 0});
      }
      r.queue_done.clear();
      for (auto& w : r.caught_up) w();
      r.caught_up.clear();
    }
    std::vector<uint64_t> ids;
    for (auto& [id, b] : batches_) ids.push_back(id);
    for (uint64_t id : ids) fail_batch(id, Status(Code::kUnavailable, "node stopping"));
    stopped.set_value();
  });
  stopped.get_future().wait();
  work_.reset();
  io_.stop();
  thread_.join();
}

// Work for the cluster thread gathers in an inbox; the thread is woken once per batch, not
// once per join, so a busy node does not pay a wakeup (and a context switch) per request.
void Node::post(std::function<void()> fn) {
  {
    std::lock_guard lock(inbox_mu_);
    inbox_.push_back(std::move(fn));
    if (inbox_scheduled_) return;
    inbox_scheduled_ = true;
  }
  asio::post(io_, [this] {
    std::vector<std::function<void()>> work;
    {
      std::lock_guard lock(inbox_mu_);
      work.swap(inbox_);
      inbox_scheduled_ = false;
    }
    for (auto& w : work) w();
  });
}

Status Node::start() {
  std::promise<Status> started;
  post([this, &started] {
    on_started_ = [&started](Status st) { started.set_value(std::move(st)); };
    connect();
    tick();
  });
  auto f = started.get_future();
  if (f.wait_for(std::chrono::milliseconds(options_.start_timeout_ms)) ==
      std::future_status::ready) {
    return f.get();
  }
  std::promise<void> cleared;
  post([this, &cleared] {
    on_started_ = nullptr;
    cleared.set_value();
  });
  cleared.get_future().wait();
  std::lock_guard lock(state_mu_);
  const std::string where = options_.sentinel_master.empty() ? "Redis at " : "Sentinel at ";
  return Status(Code::kUnavailable, where + options_.redis_host + ":" +
                                        std::to_string(options_.redis_port) +
                                        " did not answer in time: " + down_why_);
}

// A router for commands (one connection per Redis, or per master of a Redis Cluster) and a
// connection subscribed to the bell every append rings (a Redis Cluster passes a publish
// on to every node, so any one will do).
void Node::connect() {
  if (stopping_) return;
  if (!options_.sentinel_master.empty()) return ask_sentinel(0);  // node_sentinel.cc
  std::vector<Endpoint> seeds{{options_.redis_host, options_.redis_port}};
  seeds.insert(seeds.end(), options_.more_redis.begin(), options_.more_redis.end());
  connect_to(std::move(seeds));
}

void Node::connect_to(std::vector<Endpoint> seeds) {
  cmd_ = std::make_shared<RedisRouter>(io_, std::move(seeds), options_.timeout_ms, options_.access);
  load_scripts();
  auto cmd = cmd_;
  cmd_->on_close = [this, cmd](const std::string& why) {
    if (cmd == cmd_) lost(why);
  };
  cmd_->connect([this, cmd](const std::string& error) {
    if (cmd != cmd_) return;
    if (!error.empty()) return lost(error);
    sub_ = std::make_shared<RedisConnection>(io_, cmd_->seed().first, cmd_->seed().second,
                                             options_.timeout_ms, options_.access);
    sub_->on_close = [this, cmd](const std::string& why) {
      if (cmd == cmd_) lost(why);
    };
    sub_->connect([this, cmd](const std::string& error2) {
      if (cmd != cmd_) return;
      if (!error2.empty()) return lost(error2);
      on_connected();
    });
  });
}

// The secret first: a node with another token secret would hand out ids and tokens the
// others cannot read.
void Node::on_connected() {
  const std::string key = "anteroom:secret-check";
  cmd_->command({"SET", key, options_.secret_check, "NX"}, [](const RedisReply&) {});
  cmd_->command({"GET", key}, [this, cmd = cmd_](const RedisReply& r) {
    if (cmd != cmd_) return;
    if (r.is_error()) return lost(r.str);
    if (r.str != options_.secret_check) {
      const Status refused(Code::kInvalidArgument,
                           "this cluster uses another token secret or token key "
                           "(anteroom:secret-check in Redis differs): every node needs the same "
                           "--token-secret, --token-alg and (ES256) --token-key");
      stopping_ = true;
      if (on_started_) {
        auto call = std::move(on_started_);
        on_started_ = nullptr;
        call(refused);
      }
      cmd_->close("secret differs");
      return;
    }
    sub_->subscribe("anteroom:bell", [this](const RedisReply& m) {
      // ["message", channel, "ROOM ORIGIN"]: this node fetches its own records anyway
      if (!m.is_array() || m.elements.size() != 3 || m.elements[0].str != "message") return;
      const std::string& text = m.elements[2].str;
      const auto space = text.find(' ');
      const std::string room = text.substr(0, space);
      if (!valid_room_name(room)) return;
      if (space != std::string::npos && text.compare(space + 1, std::string::npos, origin_) == 0 &&
          rooms_.contains(room)) {
        return;
      }
      track(room);
      fetch(room);
    });
    up_ = true;
    {
      std::lock_guard lock(state_mu_);
      reachable_ = true;
      down_why_.clear();
    }
    refresh_rooms([this] {
      if (on_started_) {
        auto call = std::move(on_started_);
        on_started_ = nullptr;
        call(Status::ok());
      }
    });
  });
}

// Redis is gone: nothing this node proposed can be answered by it, so every waiting write
// fails now; reads go on from memory. Reconnects every half second.
void Node::lost(const std::string& why) {
  {
    std::lock_guard lock(state_mu_);
    reachable_ = false;
    down_why_ = why;
  }
  const bool was_up = up_;
  up_ = false;
  if (cmd_) {
    auto c = std::move(cmd_);
    c->on_close = nullptr;
    c->close(why);
  }
  if (sub_) {
    auto s = std::move(sub_);
    s->on_close = nullptr;
    s->close(why);
  }
  if (on_started_ && redis_access_refused(why)) {  // no use trying until start's time is up
    auto started = std::move(on_started_);
    on_started_ = nullptr;
    started(Status(Code::kUnavailable, why));
  }
  const Status st(Code::kUnavailable, "Redis unreachable: " + why);
  for (auto& [room, r] : rooms_) {
    r.lease_until = {};
    r.appending = r.fetching = r.loading = r.snapshotting = r.deciding = false;
    r.fetch_again = false;
    auto done = std::move(r.queue_done);
    r.queue.clear();
    r.queue_done.clear();
    for (auto& d : done) {
      if (d) d(Applied{st, {}, {}, 0});
    }
    auto waiters = std::move(r.caught_up);
    r.caught_up.clear();
    for (auto& w : waiters) w();
  }
  std::vector<uint64_t> ids;
  for (auto& [id, b] : batches_) ids.push_back(id);
  for (uint64_t id : ids) fail_batch(id, st);
  if (stopping_) return;
  static_cast<void>(was_up);
  reconnect_timer_.expires_after(std::chrono::milliseconds(500));
  reconnect_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) connect();
  });
}

Status Node::unreachable() const {
  std::lock_guard lock(state_mu_);
  return Status(Code::kUnavailable, "Redis unreachable: " + down_why_);
}

Status Node::health() const {
  std::lock_guard lock(state_mu_);
  if (reachable_) return Status::ok();
  return Status(Code::kUnavailable, "Redis unreachable: " + down_why_);
}

// ---- Reads: the replica, and what visitors were seen doing.

Result<RoomInfo> Node::room_info(std::string_view room) const { return replica_->room_info(room); }
std::vector<RoomInfo> Node::rooms() const { return replica_->rooms(); }

Result<TicketView> Node::status(std::string_view room, std::string_view ticket) {
  auto v = replica_->peek(room, ticket);
  if (v.is_ok() && (v->state == TicketState::kWaiting || v->state == TicketState::kActive)) {
    mark_seen(room, v->seq);
  }
  return v;
}

Result<TicketView> Node::peek(std::string_view room, std::string_view ticket) const {
  return replica_->peek(room, ticket);
}

Status Node::heartbeat(std::string_view room, std::string_view ticket) {
  auto v = status(room, ticket);
  return v.is_ok() ? Status::ok() : v.status();
}

Result<TicketDetail> Node::describe(std::string_view room, std::string_view ticket) const {
  return replica_->describe(room, ticket);
}
Result<DrawInfo> Node::draw(std::string_view room) const { return replica_->draw(room); }
Result<JoinRules> Node::join_rules(std::string_view room) const {
  return replica_->join_rules(room);
}

Result<std::vector<RestoredTicket>> Node::export_tickets(std::string_view room) const {
  return replica_->export_tickets(room);
}
size_t Node::lanes() const { return replica_->lanes(); }
void Node::run_lane(size_t lane) { replica_->run_lane(lane); }
int64_t Node::lane_due_ms(size_t lane) const { return replica_->lane_due_ms(lane); }
void Node::set_wake_hook(std::function<void(size_t)> wake) {
  replica_->set_wake_hook(std::move(wake));
}
uint64_t Node::room_set_version() const { return replica_->room_set_version(); }
uint64_t Node::config_version() const { return replica_->config_version(); }

void Node::spend(std::string_view key, uint32_t limit, int64_t ttl_ms,
                 std::function<void(bool)> then) {
  post([this, key = "anteroom:spend:{" + std::string(key) + "}", limit, ttl_ms,
        then = std::move(then)] {
    if (!up_) return then(false);
    cmd_->command({"EVAL", std::string(lua_script("cluster/lua/spend.lua")), "1", key,
                   std::to_string(limit), std::to_string(ttl_ms)},
                  [then](const RedisReply& r) { then(!r.is_error() && r.integer == 1); });
  });
}
size_t Node::poll_events(std::vector<Event>& out, size_t max) {
  return replica_->poll_events(out, max);
}
EngineStats Node::stats() const { return replica_->stats(); }
const anteroom::Clock& Node::clock() const { return *clock_; }

ClusterInfo Node::cluster_info() const {
  std::lock_guard lock(state_mu_);
  ClusterInfo info = info_;
  info.self = name_;
  info.redis_reachable = reachable_;
  return info;
}

bool Node::may_be_ahead(std::string_view room, std::string_view ticket) const {
  if (!codec_) return true;  // ids this node cannot read: ask Redis
  uint64_t seq = 0;
  Tag tag{};
  if (!codec_->decode(ticket, &seq, &tag)) return false;
  auto info = replica_->room_info(room);
  if (!info.is_ok()) return true;  // the room itself may be one this copy has not applied
  const uint64_t claimed = info->counters.joined_total;
  return seq >= claimed && seq - claimed < kTicketsAhead;
}

bool Node::when_caught_up(std::string_view room, std::string_view ticket,
                          std::function<void()> done) {
  if (replica_->peek(room, ticket).is_ok() || !valid_room_name(room)) return false;
  if (!may_be_ahead(room, ticket)) return false;
  post([this, room = std::string(room), done = std::move(done)]() mutable {
    auto it = rooms_.find(room);
    if (!up_ || it == rooms_.end() || it->second.caught_up.size() >= kMaxCaughtUpWaiters) {
      return done();
    }
    // No fetch of its own: the join's record rings the bell, and a room someone waits in is
    // read once a report interval (a second) anyway; a read of an id nobody joined with
    // costs Redis one read of the room a second, however many wait.
    it->second.caught_up.push_back(std::move(done));
  });
  return true;
}

Result<std::unique_ptr<ClusterEngine>> open_cluster_engine(const ClusterOptions& options,
                                                           EngineOptions engine) {
  auto node = std::make_unique<Node>(options, std::move(engine));
  if (Status st = node->start(); !st.is_ok()) return st;
  return std::unique_ptr<ClusterEngine>(std::move(node));
}

}  // namespace anteroom::cluster
