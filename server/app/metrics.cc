#include "server/app/metrics.h"

#include <cstdio>

namespace anteroom {

const char* route_name(Route r) {
  static constexpr const char* kNames[] = {
      "join",     "status",     "leave",       "events",   "websocket", "wait_page", "put_room",
      "get_room", "list_rooms", "delete_room", "admit",    "clear",     "verify",    "gate",
      "metrics",  "healthz",    "readyz",      "snapshot", "not_found"};
  static_assert(std::size(kNames) == static_cast<size_t>(Route::kCount));
  return kNames[static_cast<size_t>(r)];
}

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

std::string Metrics::render(const Engine& engine) const {
  std::string out;
  char line[256];
  auto add = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  };
  out += "# HELP anteroom_http_requests_total HTTP requests by route and status code.\n";
  out += "# TYPE anteroom_http_requests_total counter\n";
  for (size_t r = 0; r < kRoutes; ++r) {
    for (size_t c = 0; c <= kCodes.size(); ++c) {
      uint64_t n = 0;
      for (const Shard& sh : shards_) n += sh.requests[r][c].load(kRelaxed);
      if (n == 0) continue;
      std::string code = c < kCodes.size() ? std::to_string(kCodes[c]) : "other";
      add("anteroom_http_requests_total{route=\"%s\",code=\"%s\"} %llu\n",
          route_name(static_cast<Route>(r)), code.c_str(), static_cast<unsigned long long>(n));
    }
  }
  out += "# HELP anteroom_http_request_duration_seconds Time to answer a request.\n";
  out += "# TYPE anteroom_http_request_duration_seconds histogram\n";
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= kBuckets.size(); ++b) {
    for (const Shard& sh : shards_) cumulative += sh.latency[b].load(kRelaxed);
    if (b < kBuckets.size()) {
      add("anteroom_http_request_duration_seconds_bucket{le=\"%g\"} %llu\n", kBuckets[b],
          static_cast<unsigned long long>(cumulative));
    } else {
      add("anteroom_http_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
          static_cast<unsigned long long>(cumulative));
    }
  }
  uint64_t sum_us = 0;
  for (const Shard& sh : shards_) sum_us += sh.latency_sum_us.load(kRelaxed);
  add("anteroom_http_request_duration_seconds_sum %.6f\n", static_cast<double>(sum_us) / 1e6);
  add("anteroom_http_request_duration_seconds_count %llu\n",
      static_cast<unsigned long long>(cumulative));

  out +=
      "# HELP anteroom_joins_total Joins; created=false when a user got their live ticket back.\n";
  out += "# TYPE anteroom_joins_total counter\n";
  add("anteroom_joins_total{created=\"true\"} %llu\n",
      static_cast<unsigned long long>(joins_new_.load(kRelaxed)));
  add("anteroom_joins_total{created=\"false\"} %llu\n",
      static_cast<unsigned long long>(joins_existing_.load(kRelaxed)));
  out += "# HELP anteroom_admissions_total Tickets admitted (WAITING to ALLOWED).\n";
  out += "# TYPE anteroom_admissions_total counter\n";
  const EngineStats stats = engine.stats();
  add("anteroom_admissions_total %llu\n", static_cast<unsigned long long>(stats.admitted));
  out += "# HELP anteroom_expiries_total Tickets expired, by reason.\n";
  out += "# TYPE anteroom_expiries_total counter\n";
  for (EndReason r : {EndReason::kAllowedUnused, EndReason::kSessionIdle, EndReason::kAbandoned}) {
    add("anteroom_expiries_total{reason=\"%s\"} %llu\n", reason_name(r),
        static_cast<unsigned long long>(stats.expired[static_cast<size_t>(r)]));
  }
  out += "# HELP anteroom_open_connections Open connections by kind.\n";
  out += "# TYPE anteroom_open_connections gauge\n";
  const char* kinds[] = {"http", "sse", "websocket"};
  for (size_t k = 0; k < 3; ++k) {
    add("anteroom_open_connections{kind=\"%s\"} %lld\n", kinds[k],
        static_cast<long long>(open_[k].load(kRelaxed)));
  }
  out +=
      "# HELP anteroom_dropped_slow_consumers_total Streams closed because they read too slowly.\n";
  out += "# TYPE anteroom_dropped_slow_consumers_total counter\n";
  add("anteroom_dropped_slow_consumers_total %llu\n",
      static_cast<unsigned long long>(dropped_slow_.load(kRelaxed)));
  out +=
      "# HELP anteroom_refused_connections_total Connections answered 503 at the connection cap.\n";
  out += "# TYPE anteroom_refused_connections_total counter\n";
  add("anteroom_refused_connections_total %llu\n",
      static_cast<unsigned long long>(refused_.load(kRelaxed)));

  out +=
      "# HELP anteroom_room_waiting Tickets waiting, per room.\n# TYPE anteroom_room_waiting "
      "gauge\n";
  std::string active =
      "# HELP anteroom_room_active Tickets ALLOWED or ACTIVE, per room.\n"
      "# TYPE anteroom_room_active gauge\n";
  for (const RoomInfo& r : engine.rooms()) {
    add("anteroom_room_waiting{room=\"%s\"} %llu\n", r.name.c_str(),
        static_cast<unsigned long long>(r.counters.waiting));
    std::snprintf(line, sizeof line, "anteroom_room_active{room=\"%s\"} %llu\n", r.name.c_str(),
                  static_cast<unsigned long long>(r.counters.active));
    active += line;
  }
  out += active;
  return out;
}

}  // namespace anteroom
