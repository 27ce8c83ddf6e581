#include "server/app/metrics.h"

#include "server/app/token.h"

#include <cstdio>

namespace anteroom {

size_t Metrics::my_shard() {
  static std::atomic<size_t> next{0};
  thread_local size_t mine = next.fetch_add(1, kRelaxed) % kShards;
  return mine;
}

void Metrics::request(Route r, unsigned status, double seconds) {
  Shard& sh = shards_[my_shard()];
  size_t code = kCodes.size();  // "other"
  for (size_t i = 0; i < kCodes.size(); ++i) {
    if (kCodes[i] == status) code = i;
  }
  sh.requests[static_cast<size_t>(r)][code].fetch_add(1, kRelaxed);
  size_t b = 0;
  while (b < kBuckets.size() && seconds > kBuckets[b]) ++b;
  sh.latency[b].fetch_add(1, kRelaxed);
  sh.latency_sum_us.fetch_add(static_cast<uint64_t>(seconds * 1e6), kRelaxed);
}

// Appends printf-formatted text.
struct Metrics::Text {
  template <typename... Args>
  void add(const char* fmt, Args... args) {
    char line[256];
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  }
  // HELP and TYPE lines of one metric.
  void head(const char* name, const char* type, const char* help) {
    add("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
  }
  std::string out;
};

namespace {

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

void Metrics::render_requests(Text& t) const {
  t.head("anteroom_http_requests_total", "counter", "HTTP requests by route and status code.");
  for (size_t r = 0; r < kRoutes; ++r) {
    for (size_t c = 0; c <= kCodes.size(); ++c) {
      uint64_t n = 0;
      for (const Shard& sh : shards_) n += sh.requests[r][c].load(kRelaxed);
      if (n == 0) continue;
      std::string code = c < kCodes.size() ? std::to_string(kCodes[c]) : "other";
      t.add("anteroom_http_requests_total{route=\"%s\",code=\"%s\"} %llu\n",
            route_name(static_cast<Route>(r)), code.c_str(), ull(n));
    }
  }
  t.head("anteroom_http_request_duration_seconds", "histogram", "Time to answer a request.");
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= kBuckets.size(); ++b) {
    for (const Shard& sh : shards_) cumulative += sh.latency[b].load(kRelaxed);
    if (b < kBuckets.size()) {
      t.add("anteroom_http_request_duration_seconds_bucket{le=\"%g\"} %llu\n", kBuckets[b],
            ull(cumulative));
    } else {
      t.add("anteroom_http_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n", ull(cumulative));
    }
  }
  uint64_t sum_us = 0;
  for (const Shard& sh : shards_) sum_us += sh.latency_sum_us.load(kRelaxed);
  t.add("anteroom_http_request_duration_seconds_sum %.6f\n", static_cast<double>(sum_us) / 1e6);
  t.add("anteroom_http_request_duration_seconds_count %llu\n", ull(cumulative));
}

void Metrics::render_line(Text& t, const EngineStats& stats) const {
  t.head("anteroom_joins_total", "counter",
         "Joins; created=false when a user got their live ticket back.");
  t.add("anteroom_joins_total{created=\"true\"} %llu\n", ull(joins_new_.load(kRelaxed)));
  t.add("anteroom_joins_total{created=\"false\"} %llu\n", ull(joins_existing_.load(kRelaxed)));
  t.head("anteroom_admissions_total", "counter", "Tickets admitted (WAITING to ALLOWED).");
  t.add("anteroom_admissions_total %llu\n", ull(stats.admitted));
  t.head("anteroom_expiries_total", "counter", "Tickets expired, by reason.");
  for (EndReason r : {EndReason::kAllowedUnused, EndReason::kSessionIdle, EndReason::kAbandoned}) {
    t.add("anteroom_expiries_total{reason=\"%s\"} %llu\n", reason_name(r),
          ull(stats.expired[static_cast<size_t>(r)]));
  }
}

void Metrics::render_tokens(Text& t) const {
  if (tokens_ == nullptr) return;
  t.head("anteroom_token_signature_checks_total", "counter",
         "Admission token signatures checked (HMAC or ECDSA); cache hits and early refusals "
         "check none.");
  t.add("anteroom_token_signature_checks_total %llu\n", ull(tokens_->signature_checks()));
}

void Metrics::render_connections(Text& t) const {
  t.head("anteroom_open_connections", "gauge", "Open connections by kind.");
  const char* kinds[] = {"http", "sse", "websocket"};
  for (size_t k = 0; k < 3; ++k) {
    t.add("anteroom_open_connections{kind=\"%s\"} %lld\n", kinds[k],
          static_cast<long long>(open_[k].load(kRelaxed)));
  }
  t.head("anteroom_dropped_slow_consumers_total", "counter",
         "Streams closed because they read too slowly.");
  t.add("anteroom_dropped_slow_consumers_total %llu\n", ull(dropped_slow_.load(kRelaxed)));
  t.head("anteroom_refused_connections_total", "counter",
         "Connections answered 503 at the connection cap.");
  t.add("anteroom_refused_connections_total %llu\n", ull(refused_.load(kRelaxed)));
  t.head("anteroom_accept_backoffs_total", "counter",
         "Times accepting paused for lack of descriptors or memory.");
  t.add("anteroom_accept_backoffs_total %llu\n", ull(accept_backoffs_.load(kRelaxed)));
  t.head("anteroom_access_log_dropped_total", "counter",
         "Access log lines lost: the writer fell behind (queue_full) or writing failed.");
  t.add("anteroom_access_log_dropped_total{reason=\"queue_full\"} %llu\n",
        ull(access_log_queue_full_.load(kRelaxed)));
  t.add("anteroom_access_log_dropped_total{reason=\"write_error\"} %llu\n",
        ull(access_log_write_failed_.load(kRelaxed)));
  t.head("anteroom_access_log_reopen_failures_total", "counter",
         "Times SIGHUP could not reopen the access log's path (the old file is kept).");
  t.add("anteroom_access_log_reopen_failures_total %llu\n",
        ull(access_log_reopen_failed_.load(kRelaxed)));
}

// Whether the line can be stored (the log, or Redis in a cluster), and how long the log's
// syncs take.
void Metrics::render_storage(Text& t, const Engine& engine, const EngineStats& stats) {
  const int up = engine.health().is_ok() ? 1 : 0;
  if (engine.cluster_view() != nullptr) {
    t.head("anteroom_redis_up", "gauge", "1 while this cluster node reaches Redis, else 0.");
    t.add("anteroom_redis_up %d\n", up);
  } else {
    t.head("anteroom_storage_up", "gauge",
           "1 while the log takes writes (always 1 without persistence), 0 once it failed.");
    t.add("anteroom_storage_up %d\n", up);
  }
  t.head("anteroom_push_hints_dropped_total", "counter",
         "Push hints the engine dropped (streams then catch up on their next update).");
  t.add("anteroom_push_hints_dropped_total %llu\n", ull(stats.events_dropped));
  if (!stats.log_syncs) return;
  const LatencyHistogram& h = *stats.log_syncs;
  t.head("anteroom_fsync_seconds", "histogram", "Time the log's fdatasync took.");
  for (size_t i = 0; i < h.bounds_seconds.size() && i < h.at_most.size(); ++i) {
    t.add("anteroom_fsync_seconds_bucket{le=\"%g\"} %llu\n", h.bounds_seconds[i],
          ull(h.at_most[i]));
  }
  t.add("anteroom_fsync_seconds_bucket{le=\"+Inf\"} %llu\n", ull(h.count));
  t.add("anteroom_fsync_seconds_sum %.6f\n", h.sum_seconds);
  t.add("anteroom_fsync_seconds_count %llu\n", ull(h.count));
}

// Per room, the counters that only grow (rates over them: joins and admissions a second).
void Metrics::render_room_totals(Text& t, const std::vector<RoomInfo>& rooms) {
  struct Total {
    const char* name;
    const char* help;
    uint64_t RoomCounters::*field;
  };
  static constexpr Total kTotals[] = {
      {"anteroom_room_joins_total", "Tickets created, per room.", &RoomCounters::joined_total},
      {"anteroom_room_admissions_total", "Tickets admitted, per room.",
       &RoomCounters::admitted_total},
      {"anteroom_room_left_total", "Tickets that left, per room.", &RoomCounters::left_total},
      {"anteroom_room_cleared_total", "Waiting tickets cleared by the operator, per room.",
       &RoomCounters::cleared_total}};
  for (const Total& total : kTotals) {
    t.head(total.name, "counter", total.help);
    for (const RoomInfo& r : rooms)
      t.add("%s{room=\"%s\"} %llu\n", total.name, r.name.c_str(), ull(r.counters.*total.field));
  }
  t.head("anteroom_room_expiries_total", "counter", "Tickets expired, per room and reason.");
  for (const RoomInfo& r : rooms) {
    const std::pair<EndReason, uint64_t> expiries[] = {
        {EndReason::kAllowedUnused, r.counters.expired_allowed_unused},
        {EndReason::kSessionIdle, r.counters.expired_session_idle},
        {EndReason::kAbandoned, r.counters.expired_abandoned}};
    for (const auto& [reason, n] : expiries) {
      t.add("anteroom_room_expiries_total{room=\"%s\",reason=\"%s\"} %llu\n", r.name.c_str(),
            reason_name(reason), ull(n));
    }
  }
}

namespace {

// Whether the room lets its line in by itself now: not when it admits by hand, is paused
// (queue_all, the room's own mode or its running event's) or holds an event's pre-queue.
// The queue alert (deploy/prometheus/alerts.yml) fires only for rooms that do.
bool admits_on_its_own(const RoomConfig& c) {
  if (c.admission == AdmissionMode::kManual) return false;
  const RoomEvent& e = c.event;
  RoomMode mode = c.mode;
  if (e.exists() && e.phase == RoomEvent::Phase::kStarted && e.mode) mode = *e.mode;
  if (mode == RoomMode::kQueueAll) return false;
  return !(e.exists() && e.phase == RoomEvent::Phase::kPrequeue);
}

}  // namespace

std::string Metrics::render(bool per_room) const {
  if (engine_ != nullptr) return render(*engine_, per_room);
  Text t;
  render_requests(t);
  render_connections(t);
  render_tokens(t);
  t.out += gate_.render(per_room);
  return std::move(t.out);
}

std::string Metrics::render(const Engine& engine, bool per_room) const {
  Text t;
  render_requests(t);
  const EngineStats stats = engine.stats();
  render_line(t, stats);
  render_connections(t);
  render_tokens(t);
  render_storage(t, engine, stats);
  t.out += gate_.render(per_room);
  if (!per_room) return std::move(t.out);
  const std::vector<RoomInfo> rooms = engine.rooms();
  t.head("anteroom_room_waiting", "gauge", "Tickets waiting, per room.");
  for (const RoomInfo& r : rooms)
    t.add("anteroom_room_waiting{room=\"%s\"} %llu\n", r.name.c_str(), ull(r.counters.waiting));
  t.head("anteroom_room_active", "gauge", "Tickets ALLOWED or ACTIVE, per room.");
  for (const RoomInfo& r : rooms)
    t.add("anteroom_room_active{room=\"%s\"} %llu\n", r.name.c_str(), ull(r.counters.active));
  t.head("anteroom_room_admitting", "gauge",
         "1 while the room admits by itself; 0 while it admits by hand, is paused (queue_all) "
         "or holds an event's pre-queue.");
  for (const RoomInfo& r : rooms)
    t.add("anteroom_room_admitting{room=\"%s\"} %d\n", r.name.c_str(),
          admits_on_its_own(r.config) ? 1 : 0);
  render_room_totals(t, rooms);
  return std::move(t.out);
}

}  // namespace anteroom
