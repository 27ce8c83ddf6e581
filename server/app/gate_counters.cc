#include "server/app/gate_counters.h"

#include <cstdio>

namespace anteroom {

void GateCounters::bypassed(std::string_view room, std::string_view rule) {
  std::lock_guard lock(mu_);
  auto key = std::make_pair(std::string(room), std::string(rule));
  auto it = bypassed_.find(key);
  if (it == bypassed_.end()) {
    if (bypassed_.size() >= kMaxSeries) return;  // labels are bounded; the outcome still counts
    it = bypassed_.emplace(std::move(key), 0).first;
  }
  ++it->second;
}

std::string GateCounters::render(bool per_room) const {
  static constexpr const char* kNames[] = {"unprotected", "bypassed", "pass",
                                           "admitted",    "direct",   "denied"};
  std::string out =
      "# HELP anteroom_gate_answers_total The forward-auth gate's answers, by outcome.\n"
      "# TYPE anteroom_gate_answers_total counter\n";
  char line[160];
  for (size_t i = 0; i < outcomes_.size(); ++i) {
    std::snprintf(line, sizeof line, "anteroom_gate_answers_total{outcome=\"%s\"} %llu\n",
                  kNames[i], static_cast<unsigned long long>(outcomes_[i].load(kRelaxed)));
    out += line;
  }
  if (!per_room) return out;
  out +=
      "# HELP anteroom_gate_bypassed_total Requests a room's bypass rule let through the gate.\n"
      "# TYPE anteroom_gate_bypassed_total counter\n";
  std::lock_guard lock(mu_);
  for (const auto& [key, n] : bypassed_) {
    // Room names and rule names are [A-Za-z0-9_-]: nothing to escape.
    out += "anteroom_gate_bypassed_total{room=\"" + key.first + "\",rule=\"" + key.second + "\"} " +
           std::to_string(n) + "\n";
  }
  return out;
}

}  // namespace anteroom
