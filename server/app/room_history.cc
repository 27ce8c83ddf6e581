#include "server/app/room_history.h"

#include <algorithm>
#include <limits>

namespace anteroom {
namespace {

uint32_t clamp32(uint64_t v) {
  return static_cast<uint32_t>(std::min<uint64_t>(v, std::numeric_limits<uint32_t>::max()));
}

// How far a running total moved; a total that went down started over (the room was made
// again), so all of it is new.
uint32_t moved(uint64_t now, uint64_t before) {
  return clamp32(now >= before ? now - before : now);
}

}  // namespace

HistorySample RoomHistory::sample_of(const Ring& ring, const RoomCounters& c, int64_t unix_ms) {
  HistorySample s;
  s.unix_ms = unix_ms;
  s.waiting = clamp32(c.waiting);
  s.active = clamp32(c.active);
  if (ring.count == 0 || unix_ms <= ring.last_ms) return s;  // nothing to compare with yet
  const RoomCounters& b = ring.last;
  s.span_ms = clamp32(static_cast<uint64_t>(unix_ms - ring.last_ms));
  s.joins = moved(c.joined_total, b.joined_total);
  s.admissions = moved(c.admitted_total, b.admitted_total);
  s.expiries[0] = moved(c.expired_allowed_unused, b.expired_allowed_unused);
  s.expiries[1] = moved(c.expired_session_idle, b.expired_session_idle);
  s.expiries[2] = moved(c.expired_abandoned, b.expired_abandoned);
  return s;
}

void RoomHistory::record(int64_t unix_ms, const std::vector<RoomInfo>& rooms) {
  std::lock_guard lock(mu_);
  ++generation_;
  size_t kept = 0;
  for (const RoomInfo& r : rooms) {
    auto it = rings_.find(r.name);
    if (it == rings_.end()) {
      if (rings_.size() >= kMaxRooms) continue;
      it = rings_.emplace(r.name, Ring{}).first;
    }
    Ring& ring = it->second;
    if (r.counters.joined_total < ring.last.joined_total) ring.count = 0;  // made again
    ring.samples[ring.next] = sample_of(ring, r.counters, unix_ms);
    ring.next = (ring.next + 1) % kSamples;
    ring.count = std::min(ring.count + 1, kSamples);
    ring.last = r.counters;
    ring.last_ms = unix_ms;
    ring.generation = generation_;
    ++kept;
  }
  if (kept != rings_.size()) {
    std::erase_if(rings_, [this](const auto& kv) { return kv.second.generation != generation_; });
  }
}

std::vector<HistorySample> RoomHistory::samples(std::string_view room) const {
  std::lock_guard lock(mu_);
  auto it = rings_.find(std::string(room));
  if (it == rings_.end()) return {};
  const Ring& ring = it->second;
  std::vector<HistorySample> out;
  out.reserve(ring.count);
  const size_t first = (ring.next + kSamples - ring.count) % kSamples;
  for (size_t i = 0; i < ring.count; ++i) out.push_back(ring.samples[(first + i) % kSamples]);
  return out;
}

bool RoomHistory::latest(std::string_view room, HistorySample* out) const {
  std::lock_guard lock(mu_);
  auto it = rings_.find(std::string(room));
  if (it == rings_.end() || it->second.count == 0) return false;
  *out = it->second.samples[(it->second.next + kSamples - 1) % kSamples];
  return true;
}

size_t RoomHistory::rooms() const {
  std::lock_guard lock(mu_);
  return rings_.size();
}

std::vector<std::string> RoomHistory::names() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.reserve(rings_.size());
  for (const auto& [name, ring] : rings_) out.push_back(name);
  return out;
}

}  // namespace anteroom
