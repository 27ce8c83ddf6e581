// What the forward-auth gate decided, for /metrics: its answers by outcome, and the requests
// each bypass rule let by (anteroom_gate_bypassed_total{room,rule}).
//
// Thread safety: every method from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace anteroom {

enum class GateOutcome : uint8_t {
  kUnprotected,  // no room's match rule fits: allowed
  kBypassed,     // a bypass rule fits: allowed
  kPass,         // a valid pass: allowed
  kAdmitted,     // a valid admission: allowed
  kDirect,       // the gate admitted the visitor itself: allowed
  kDenied,       // sent to the waiting page (or 401 / 429)
  kCount
};

class GateCounters {
 public:
  void count(GateOutcome o) { outcomes_[static_cast<size_t>(o)].fetch_add(1, kRelaxed); }
  void bypassed(std::string_view room, std::string_view rule);
  // The series in Prometheus text; `per_room`: the bypassed series too (room labels).
  std::string render(bool per_room) const;

 private:
  static constexpr auto kRelaxed = std::memory_order_relaxed;
  std::array<std::atomic<uint64_t>, static_cast<size_t>(GateOutcome::kCount)> outcomes_{};
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, uint64_t> bypassed_;  // at most kMaxSeries
  static constexpr size_t kMaxSeries = 10'000;
};

}  // namespace anteroom
