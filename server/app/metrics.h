// Prometheus metrics. Counters are relaxed atomics in fixed tables (no lock, no allocation
// on the request path); render() builds the text format on demand.
//
// Thread safety: every method from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "server/app/gate_counters.h"

namespace anteroom {

enum class Route : uint8_t {
  kJoin,
  kStatus,
  kLeave,
  kEvents,
  kWebSocket,
  kWaitPage,
  kPutRoom,
  kGetRoom,
  kListRooms,
  kDeleteRoom,
  kAdmit,
  kClear,
  kVerify,
  kGate,
  kJwks,
  kMetrics,
  kHealth,
  kReady,
  kSnapshot,
  kCookie,
  kCluster,
  kClusterReseed,
  kEvent,
  kDraw,
  kPage,
  kChallenge,
  kDashboard,
  kDashboardStream,
  kRoomHistory,
  kForwardAuth,
  kEnter,
  kPasses,
  kNotFound,
  kCrossSite,  // a write from a page on another site, refused before routing
  kUnrouted,   // refused by the transport before routing: bad HTTP, 413, 431, shutting down
  kCount
};
// The route label in /metrics (from the route table, route_table.cc).
const char* route_name(Route r);

enum class ConnKind : uint8_t { kHttp, kSse, kWebSocket, kCount };

class Metrics {
 public:
  void request(Route r, unsigned status, double seconds);
  void joined(bool created) { (created ? joins_new_ : joins_existing_).fetch_add(1, kRelaxed); }
  void opened(ConnKind k) { open_[static_cast<size_t>(k)].fetch_add(1, kRelaxed); }
  void closed(ConnKind k) { open_[static_cast<size_t>(k)].fetch_sub(1, kRelaxed); }
  int64_t open(ConnKind k) const { return open_[static_cast<size_t>(k)].load(kRelaxed); }
  void slow_consumer_dropped() { dropped_slow_.fetch_add(1, kRelaxed); }
  void refused_connection() { refused_.fetch_add(1, kRelaxed); }
  void accept_backoff() { accept_backoffs_.fetch_add(1, kRelaxed); }
  // Access log lines lost: the writer fell behind (queue full) or writing failed.
  void access_log_dropped(bool write_error, uint64_t lines = 1) {
    (write_error ? access_log_write_failed_ : access_log_queue_full_).fetch_add(lines, kRelaxed);
  }
  // SIGHUP could not open the access log's path again (the old file is kept).
  void access_log_reopen_failed() { access_log_reopen_failed_.fetch_add(1, kRelaxed); }

  // The signer whose checked signatures anteroom_token_signature_checks_total counts (not
  // owned; it must outlive the metrics' renders). Until set, the series is left out.
  void count_signatures_of(const class TokenSigner* tokens) { tokens_ = tokens; }

  // The engine whose line, storage and rooms render(per_room) reports (not owned; it must
  // outlive the metrics' renders). The routes see only the RoomService part of an engine;
  // the process that holds the whole one sets it here. Until set, those series are left out.
  void read_engine(const Engine* engine) { engine_ = engine; }
  GateCounters& gate() { return gate_; }

  // `per_room`: also the series per room (their labels are room names).
  std::string render(const Engine& engine, bool per_room = true) const;
  std::string render(bool per_room) const;

 private:
  struct Text;  // the text being rendered
  void render_requests(Text& t) const;
  void render_line(Text& t, const EngineStats& stats) const;
  void render_connections(Text& t) const;
  void render_tokens(Text& t) const;
  static void render_storage(Text& t, const Engine& engine, const EngineStats& stats);
  static void render_room_totals(Text& t, const std::vector<RoomInfo>& rooms);

  static constexpr auto kRelaxed = std::memory_order_relaxed;  // independent counters
  static constexpr std::array<unsigned, 15> kCodes = {200, 201, 204, 304, 400, 401, 403, 404,
                                                      405, 409, 413, 429, 431, 500, 503};
  static constexpr std::array<double, 12> kBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                      0.01,   0.025,   0.05,   0.1,   0.5,    1.0};
  static constexpr size_t kRoutes = static_cast<size_t>(Route::kCount);

  // Request counters are kept per thread shard (a thread picks one on first use), so the
  // threads serving requests do not bounce one cache line between cores; render() sums.
  static constexpr size_t kShards = 8;
  struct alignas(64) Shard {
    std::array<std::array<std::atomic<uint64_t>, kCodes.size() + 1>, kRoutes> requests{};
    std::array<std::atomic<uint64_t>, kBuckets.size() + 1> latency{};
    std::atomic<uint64_t> latency_sum_us{0};
  };
  static size_t my_shard();
  std::array<Shard, kShards> shards_{};
  std::atomic<uint64_t> joins_new_{0}, joins_existing_{0};
  std::array<std::atomic<int64_t>, static_cast<size_t>(ConnKind::kCount)> open_{};
  const class TokenSigner* tokens_ = nullptr;
  const Engine* engine_ = nullptr;
  std::atomic<uint64_t> dropped_slow_{0}, refused_{0}, accept_backoffs_{0};
  std::atomic<uint64_t> access_log_queue_full_{0}, access_log_write_failed_{0};
  std::atomic<uint64_t> access_log_reopen_failed_{0};
  GateCounters gate_;
};

}  // namespace anteroom
