#include "server/app/push_hub.h"

#include <cstdio>

namespace anteroom {

void PushHub::attach(const std::string& room, const std::shared_ptr<Stream>& s, bool wants_counts) {
  std::lock_guard lock(mu_);
  Entry& e = rooms_[room].streams[s.get()];
  e.stream = s;
  e.counts = wants_counts;
}

bool PushHub::watch(const std::string& room, const std::string& ticket, const Stream* s,
                    size_t limit) {
  std::lock_guard lock(mu_);
  auto r = rooms_.find(room);
  if (r == rooms_.end()) return false;
  auto e = r->second.streams.find(s);
  if (e == r->second.streams.end()) return false;
  if (e->second.ticket == ticket) return true;
  if (r->second.by_ticket.count(ticket) >= limit) return false;  // checked and taken together
  if (!e->second.ticket.empty()) {
    auto range = r->second.by_ticket.equal_range(e->second.ticket);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == s) {
        r->second.by_ticket.erase(it);
        break;
      }
    }
  }
  e->second.ticket = ticket;
  r->second.by_ticket.emplace(ticket, s);
  return true;
}

void PushHub::detach(const std::string& room, const Stream* s) {
  std::lock_guard lock(mu_);
  auto r = rooms_.find(room);
  if (r == rooms_.end()) return;
  auto e = r->second.streams.find(s);
  if (e == r->second.streams.end()) return;
  auto range = r->second.by_ticket.equal_range(e->second.ticket);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second == s) {
      r->second.by_ticket.erase(it);
      break;
    }
  }
  r->second.streams.erase(e);
  if (r->second.streams.empty()) rooms_.erase(r);
}

void PushHub::on_events(const std::vector<Event>& events) {
  std::vector<std::shared_ptr<Stream>> now;
  {
    std::lock_guard lock(mu_);
    for (const Event& ev : events) {
      auto r = rooms_.find(ev.room);
      if (r == rooms_.end()) continue;
      RoomState& room = r->second;
      switch (ev.kind) {
        case Event::Kind::kAdmitted:
        case Event::Kind::kExpired: {
          auto range = room.by_ticket.equal_range(std::string(id_view(ev.ticket)));
          for (auto it = range.first; it != range.second; ++it) {
            if (auto s = room.streams[it->second].stream.lock()) now.push_back(std::move(s));
          }
          break;
        }
        case Event::Kind::kPositionsMoved:
          room.moved = true;
          break;
        case Event::Kind::kCountsChanged:
          room.counts_dirty = true;
          break;
      }
    }
  }
  for (auto& s : now) s->notify();
}

std::string PushHub::visitor_count(uint64_t active, uint64_t waiting, uint32_t capacity) {
  char buf[128];
  std::snprintf(
      buf, sizeof buf, R"({"type":"VISITOR_COUNT","count":%llu,"queueCount":%llu,"maxCount":%u})",
      static_cast<unsigned long long>(active), static_cast<unsigned long long>(waiting), capacity);
  return buf;
}

void PushHub::flush(const Engine& engine) {
  std::vector<std::shared_ptr<Stream>> moved;
  std::vector<std::pair<std::shared_ptr<Stream>, std::shared_ptr<const std::string>>> counts;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, room] : rooms_) {
      std::shared_ptr<const std::string> message;
      if (room.counts_dirty) {
        // Under mu_: a registry lookup and a few relaxed loads, no lock of the engine's.
        if (auto info = engine.room_info(name); info.is_ok()) {
          message = std::make_shared<const std::string>(
              visitor_count(info->counters.active, info->counters.waiting, info->config.capacity));
        }
      }
      for (auto& [ptr, entry] : room.streams) {
        auto s = entry.stream.lock();
        if (!s) continue;
        if (room.moved && !entry.ticket.empty()) moved.push_back(s);
        if (message && entry.counts) counts.emplace_back(std::move(s), message);
      }
      room.moved = false;
      room.counts_dirty = false;
    }
  }
  for (auto& s : moved) s->notify();
  for (auto& [s, m] : counts) s->send_shared(m);
}

size_t PushHub::streams_in(const std::string& room) const {
  std::lock_guard lock(mu_);
  auto r = rooms_.find(room);
  return r == rooms_.end() ? 0 : r->second.streams.size();
}

void PushHub::broadcast(const std::string& room,
                        const std::shared_ptr<const std::string>& message) {
  std::vector<std::shared_ptr<Stream>> to;
  {
    std::lock_guard lock(mu_);
    auto r = rooms_.find(room);
    if (r == rooms_.end()) return;
    for (auto& [ptr, entry] : r->second.streams) {
      if (!entry.counts) continue;
      if (auto s = entry.stream.lock()) to.push_back(std::move(s));
    }
  }
  for (auto& s : to) s->send_shared(message);
}

void PushHub::shutdown_all() {
  std::vector<std::shared_ptr<Stream>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, room] : rooms_) {
      for (auto& [ptr, entry] : room.streams) {
        if (auto s = entry.stream.lock()) all.push_back(std::move(s));
      }
    }
  }
  for (auto& s : all) s->shutdown();
}

size_t PushHub::streams_for(const std::string& room, const std::string& ticket) const {
  std::lock_guard lock(mu_);
  auto r = rooms_.find(room);
  return r == rooms_.end() ? 0 : r->second.by_ticket.count(ticket);
}

size_t PushHub::size() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [name, room] : rooms_) n += room.streams.size();
  return n;
}

}  // namespace anteroom
