#include "server/app/dashboard_feed.h"

#include <boost/json.hpp>
#include <cmath>

#include "server/app/api.h"
#include "server/app/json_text.h"
#include "server/app/room_json.h"

namespace anteroom {
namespace json = boost::json;

namespace {

double tenth(double v) { return std::round(v * 10) / 10; }

constexpr const char* kReasons[] = {"allowed_unused", "session_idle", "abandoned"};

json::object room_live(const RoomInfo& r, const RoomHistory& history) {
  json::object o = room_json(r);
  HistorySample s;
  json::object rates;
  if (history.latest(r.name, &s)) {
    rates["joins"] = tenth(s.per_second(s.joins));
    rates["admissions"] = tenth(s.per_second(s.admissions));
    json::object expiries;
    for (size_t i = 0; i < 3; ++i) expiries[kReasons[i]] = tenth(s.per_second(s.expiries[i]));
    rates["expiries"] = std::move(expiries);
  }
  o["per_second"] = std::move(rates);
  const auto eta = last_in_line_eta(r.counters);
  o["eta_last_seconds"] = eta ? json::value(tenth(*eta)) : json::value(nullptr);
  o["event"] = r.config.event.exists() ? json::value(event_json(r.name, r.config.event))
                                       : json::value(nullptr);
  return o;
}

}  // namespace

std::optional<double> last_in_line_eta(const RoomCounters& c) {
  if (c.waiting == 0) return 0.0;
  if (!c.admit_rate_per_second || *c.admit_rate_per_second <= 0) return std::nullopt;
  return static_cast<double>(c.waiting) / *c.admit_rate_per_second;
}

std::string DashboardFeed::frame_json(int64_t unix_ms, const std::vector<RoomInfo>& rooms,
                                      const RoomHistory& history) {
  json::array list;
  list.reserve(rooms.size());
  for (const RoomInfo& r : rooms) list.push_back(room_live(r, history));
  json::object o;
  o["time"] = rfc3339(unix_ms);
  o["rooms"] = std::move(list);
  return to_json(o);
}

void DashboardFeed::tick(int64_t unix_ms, const std::vector<RoomInfo>& rooms, bool build_frame) {
  history_.record(unix_ms, rooms);
  if (!build_frame) {
    std::lock_guard lock(mu_);
    frame_.reset();  // a dashboard opening later waits for a fresh one
    return;
  }
  std::string bytes = "event: rooms\ndata: ";
  bytes += frame_json(unix_ms, rooms, history_);
  bytes += "\n\n";
  auto frame = std::make_shared<const std::string>(std::move(bytes));
  std::lock_guard lock(mu_);
  frame_ = std::move(frame);
}

void DashboardFeed::sample(int64_t unix_ms, const Engine& engine, bool build_frame) {
  const uint64_t version = engine.room_set_version();
  std::vector<RoomInfo> rooms;
  if (build_frame || version == 0 || version != room_set_version_) {
    rooms = engine.rooms();
    room_set_version_ = version;  // read before the list: a room made meanwhile reads again
  } else {
    for (const std::string& name : history_.names()) {
      if (auto info = engine.room_info(name); info.is_ok())
        rooms.push_back(std::move(info).value());
    }
  }
  tick(unix_ms, rooms, build_frame);
}

std::shared_ptr<const std::string> DashboardFeed::frame() const {
  std::lock_guard lock(mu_);
  return frame_;
}

std::optional<std::string> DashboardFeed::history_json(std::string_view room) const {
  const std::vector<HistorySample> samples = history_.samples(room);
  if (samples.empty()) return std::nullopt;
  json::array time, waiting, active, joins, admissions;
  json::array expiries[3];
  for (const HistorySample& s : samples) {
    time.push_back(s.unix_ms);
    waiting.push_back(s.waiting);
    active.push_back(s.active);
    joins.push_back(tenth(s.per_second(s.joins)));
    admissions.push_back(tenth(s.per_second(s.admissions)));
    for (size_t i = 0; i < 3; ++i) expiries[i].push_back(tenth(s.per_second(s.expiries[i])));
  }
  json::object o;
  o["room"] = room;
  o["unix_ms"] = std::move(time);
  o["waiting"] = std::move(waiting);
  o["active"] = std::move(active);
  o["joins_per_second"] = std::move(joins);
  o["admissions_per_second"] = std::move(admissions);
  json::object exp;
  for (size_t i = 0; i < 3; ++i) exp[kReasons[i]] = std::move(expiries[i]);
  o["expiries_per_second"] = std::move(exp);
  return to_json(o);
}

}  // namespace anteroom
