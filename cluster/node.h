// The cluster node's insides (cluster_engine.h says what it does). One thread runs an Asio
// io_context that does every Redis call, applies every record and runs every timer; the
// server's threads read the replica directly and post writes to that thread.
//
//   node.cc          start, stop, connections, the Engine interface's reads
//   node_writes.cc   the Engine interface's writes, each a record, and their synchronous forms
//   node_log.cc      proposing records (batched per room) and tailing the streams
//   node_decider.cc  time-driven decisions, seen-reports, snapshots, node reports
//   node_leases.cc   leases, many rooms to a script, and the queue of rooms with work due
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cluster/cluster_engine.h"
#include "cluster/records.h"
#include "cluster/redis_connection.h"
#include "cluster/redis_router.h"
#include "engine/replica.h"
#include "engine/ticket_id.h"

namespace anteroom::cluster {

bool stream_id_after(std::string_view a, std::string_view b);  // "ms-seq" ids, as numbers

class Node final : public ClusterEngine {
 public:
  Node(const ClusterOptions& options, EngineOptions engine);
  ~Node() override;
  Status start();  // from open_cluster_engine: waits until loaded, or fails
  void stop();     // fails what waits, closes the connections, joins the thread

  // ClusterEngine.
  void settle() override;
  void catch_up() override;
  void report_seen() override;
  const std::string& node_name() const override { return name_; }

  // Engine: reads from the replica.
  Result<RoomInfo> room_info(std::string_view room) const override;
  std::vector<RoomInfo> rooms() const override;
  Result<TicketView> status(std::string_view room, std::string_view ticket) override;
  Result<TicketView> peek(std::string_view room, std::string_view ticket) const override;
  Status heartbeat(std::string_view room, std::string_view ticket) override;
  Result<TicketDetail> describe(std::string_view room, std::string_view ticket) const override;
  Result<std::vector<RestoredTicket>> export_tickets(std::string_view room) const override;
  Result<DrawInfo> draw(std::string_view room) const override;
  Result<JoinRules> join_rules(std::string_view room) const override;
  size_t lanes() const override;
  void run_lane(size_t lane) override;
  int64_t lane_due_ms(size_t lane) const override;
  void set_wake_hook(std::function<void(size_t)> wake) override;
  uint64_t room_set_version() const override;
  uint64_t config_version() const override;
  // In Redis (cluster/lua/spend.lua): once for the whole cluster. Refused while Redis is out
  // of reach (a one-time thing must not be spent twice).
  void spend(std::string_view key, uint32_t limit, int64_t ttl_ms,
             std::function<void(bool)> then) override;
  size_t poll_events(std::vector<Event>& out, size_t max) override;
  EngineStats stats() const override;
  const Clock& clock() const override;
  Status health() const override;
  ClusterInfo cluster_info() const override;  // ClusterView
  // ClusterControl (node_reseed.cc).
  void reseed(std::function<void(Result<std::vector<Reseeded>>)> then) override;

  // Engine: writes as records.
  void join_async(std::string_view room, const JoinRequest& request,
                  Then<JoinResult> then) override;
  void leave_async(std::string_view room, std::string_view ticket, Then<TicketView> then) override;
  void activate_async(std::string_view room, std::string_view ticket,
                      Then<TicketDetail> then) override;
  void admit_async(std::string_view room, uint64_t count, Then<uint64_t> then) override;
  void clear_async(std::string_view room, Then<uint64_t> then) override;
  void put_room_async(std::string_view room, const RoomConfig& config,
                      std::function<void(Status)> then) override;
  void delete_room_async(std::string_view room, std::function<void(Status)> then) override;
  bool when_caught_up(std::string_view room, std::string_view ticket,
                      std::function<void()> done) override;

  // Engine: the synchronous writes wait for the asynchronous ones.
  Status put_room(std::string_view room, const RoomConfig& config) override;
  Status delete_room(std::string_view room) override;
  Result<uint64_t> admit(std::string_view room, uint64_t count) override;
  Result<uint64_t> clear(std::string_view room) override;
  Result<JoinResult> join(std::string_view room, const JoinRequest& request) override;
  Result<TicketView> leave(std::string_view room, std::string_view ticket) override;
  Result<TicketDetail> activate(std::string_view room, std::string_view ticket) override;
  Status restore_room(std::string_view room, const RoomConfig& config,
                      const std::vector<RestoredTicket>& tickets) override;

 private:
  using Done = std::function<void(const Applied&)>;
  using Steady = std::chrono::steady_clock;

  // kClient: visitors' and operators' writes, one in flight per room; kDecision: the
  // decider's, appended only while it holds the lease; kSeen: seen-reports.
  enum class Kind : uint8_t { kClient, kDecision, kSeen };
  struct Batch {  // a record this node appended and waits to apply
    std::string room;
    std::vector<Done> done;  // one per op; empty functions for ops nobody waits on
    Steady::time_point since;
    Kind kind = Kind::kClient;
    bool stored = false;    // Redis answered the append: the record is in the stream
    std::string stream_id;  // ... with this id
  };
  struct Room {                   // what the cluster thread keeps per room
    std::string last_id = "0-0";  // the last record applied
    uint64_t last_n = 0;          // its number
    bool loading = false, fetching = false, fetch_again = false;
    bool reloaded_for_gap = false;  // reloaded for a gap; a second gap: broken
    bool broken = false;            // a gap the snapshot does not cover: not applied until reloaded
    bool warned_lost = false;       // Redis numbered records anew: said once
    bool lost = false;  // Redis lost the room (append.lua said LOST): writes wait for a re-seed
    std::vector<std::function<void()>> caught_up;  // after the next whole fetch
    std::vector<Op> queue;                         // proposed, not yet appended
    std::vector<Done> queue_done;
    bool appending = false;
    bool deciding = false;             // a decision record not yet applied
    Steady::time_point lease_until{};  // this node decides while now < this
    // The room's next decision (the clock's ms) unless a record comes first; 0: at once.
    int64_t decide_at_ms = 0;
    int64_t queued_ms = kNoDeadline;  // the earliest entry of this room in due_
    Steady::time_point last_snapshot{};
    uint64_t snapshot_n = 0;       // the record number of the last snapshot
    std::string prev_snapshot_id;  // the stream is trimmed to here
    bool snapshotting = false;
    Steady::time_point last_seen_report{};  // the last seen-report of this room
  };

  // node.cc
  void connect();
  void connect_to(std::vector<Endpoint> seeds);
  // node_sentinel.cc: the master's address from the i-th Sentinel (or the next that knows
  // it), then connect_to it.
  void ask_sentinel(size_t i);
  void on_connected();
  void lost(const std::string& why);
  void post(std::function<void()> fn);
  Status unreachable() const;
  // Whether a ticket this copy does not have may be one it has not applied yet: an id of
  // this cluster whose seq is past the room's joins so far by less than kTicketsAhead. An
  // unknown id anyone can make up (a seq this copy already passed, or one no join in flight
  // could have) is answered 404 from the copy, without a fetch from Redis.
  bool may_be_ahead(std::string_view room, std::string_view ticket) const;
  static constexpr uint64_t kTicketsAhead = uint64_t{1} << 20;
  // Reads waiting for one room to catch up, at most; more are answered from the copy.
  static constexpr size_t kMaxCaughtUpWaiters = 4096;

  // node_writes.cc
  // Finds the ticket's seq (fetching the room once if this copy has not seen it), on the
  // cluster thread.
  void with_seq(const std::string& room, const std::string& ticket,
                std::function<void(Result<TicketDetail>)> then);
  template <typename T>
  Result<T> wait(const std::function<void(std::function<void(Result<T>)>)>& start);

  // node_log.cc
  void propose(const std::string& room, Op op, Done done);
  void kick(const std::string& room);
  void append(const std::string& room, std::vector<Op> ops, std::vector<Done> done, int64_t at_ms,
              Kind kind);
  void fail_batch(uint64_t batch, const Status& why);
  void load_scripts();
  void track(const std::string& room);
  void load(const std::string& room);
  void release_waiters(Room& r);  // whoever waits for this copy to catch up looks now
  void fetch(const std::string& room);
  void apply_entries(const std::string& room, const RedisReply& entries);
  bool apply_entry(const std::string& room, Room& r, const RedisReply& entry);
  // A record at or below the copy's last (node_log.cc); false: the room reloads.
  bool seen_before(const std::string& room, Room& r, uint64_t n, const std::string& id);

  // node_reseed.cc
  void lost_room(const std::string& room, Room& r, const std::string& why);
  // This node applied records of `room` that Redis does not hold: logs why and loads Redis's copy
  // of the room in place of its own (node_reseed.cc).
  void take_redis_copy(const std::string& room, const std::string& why);
  void reseed_room(const std::string& room, std::function<void(Reseeded)> then);

  // node_decider.cc
  void tick();
  void report();
  void refresh_rooms(std::function<void()> loaded = nullptr);  // `loaded`: once all applied
  void decide(const std::string& room);
  void store_snapshot(const std::string& room);
  void flush_seen(bool all);
  void mark_seen(std::string_view room, uint64_t seq);
  void expire_batches();
  void fetch_all(const std::function<void()>& done);
  void run_here(const std::function<void(std::function<void()>)>& fn);  // and wait
  void wait_quiet();

  // node_leases.cc
  // The room's next decision is at `at_ms` (kNoDeadline: none until a record comes).
  void set_due(const std::string& room, Room& r, int64_t at_ms);
  void decide_due(int64_t now_ms);  // the rooms due by now whose lease this node holds
  // Asks for the leases of `rooms`; `done` (may be empty) once every answer came.
  void renew_leases(std::vector<std::string> rooms, std::function<void()> done);
  void took_lease(const std::string& room, bool held, Steady::time_point sent);

  ClusterOptions options_;
  std::string name_;
  size_t max_rooms_ = 0;          // put_room beyond this many rooms is refused
  std::string origin_;            // name_ and a random number of this process: whose records
                                  // are ours
  std::optional<IdCodec> codec_;  // the replica's ids (given id_key), for may_be_ahead
  std::string append_sha_;        // SHA1 of the append script
  std::shared_ptr<const anteroom::Clock> clock_;
  std::unique_ptr<ReplicaEngine> replica_;

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::steady_timer ticker_;
  boost::asio::steady_timer reconnect_timer_;
  std::shared_ptr<RedisRouter> cmd_;           // commands, by key (to a Redis Cluster's shards)
  std::shared_ptr<RedisConnection> sub_;       // subscribed to the bell
  std::shared_ptr<RedisConnection> sentinel_;  // the Sentinel asked now, if any
  bool up_ = false;                            // both connections open and the secret checked
  bool stopping_ = false;
  std::map<std::string, Room, std::less<>> rooms_;
  std::map<uint64_t, Batch> batches_;
  // Rooms by the time of their next decision, earliest first; an entry is current while it
  // is its room's queued_ms (later ones are dropped as they come up).
  using DueEntry = std::pair<int64_t, std::string>;
  std::priority_queue<DueEntry, std::vector<DueEntry>, std::greater<>> due_;
  uint64_t reports_ = 0;  // report intervals so far: which rooms the sweep fetches
  uint64_t next_batch_ = 1;
  Steady::time_point last_report_{}, last_decide_{}, last_seen_flush_{};
  std::function<void(Status)> on_started_;

  // Shared with the server's threads.
  std::mutex inbox_mu_;  // post(): work for the cluster thread
  std::vector<std::function<void()>> inbox_;
  bool inbox_scheduled_ = false;
  mutable std::mutex state_mu_;
  bool reachable_ = false;
  std::string down_why_ = "not connected yet";
  ClusterInfo info_;

  static constexpr size_t kSeenStripes = 16;
  struct SeenRoom {
    std::unordered_set<uint64_t> seqs;
    int64_t latest_ms = 0;  // the latest sighting
  };
  struct SeenStripe {
    std::mutex mu;
    std::unordered_map<std::string, SeenRoom> rooms;
  };
  std::array<SeenStripe, kSeenStripes> seen_;

  std::thread thread_;
};

}  // namespace anteroom::cluster
