#include "server/app/room_json.h"

#include "server/app/gate_settings.h"

#include <algorithm>
#include <iterator>

namespace anteroom {
namespace json = boost::json;

json::object room_json(const RoomInfo& r) {
  json::object o;
  o["room"] = r.name;
  o["capacity"] = r.config.capacity;
  o["admission"] = r.config.admission == AdmissionMode::kAuto ? "auto" : "manual";
  o["admit_per_second"] = r.config.admit_per_second;
  o["allowed_ttl_seconds"] = r.config.allowed_ttl_seconds;
  o["session_ttl_seconds"] = r.config.session_ttl_seconds;
  o["heartbeat_timeout_seconds"] = r.config.heartbeat_timeout_seconds;
  o["max_waiting"] = r.config.max_waiting;
  o["trust_user"] = r.config.trust_user;
  o["mode"] = mode_name(r.config.mode);
  o["ip_joins_per_minute"] = r.config.ip_joins_per_minute;
  if (r.config.pow_difficulty == RoomConfig::kPowAuto) {
    o["pow_difficulty"] = "auto";
  } else {
    o["pow_difficulty"] = r.config.pow_difficulty;
  }
  o["event"] = r.config.event.exists() ? json::value(true) : json::value(false);
  GateSettings::from_stored(r.config.gate).put_fields(o, r.config.lanes);
  const RoomCounters& c = r.counters;
  o["waiting"] = c.waiting;
  o["active"] = c.active;
  json::object totals;
  totals["joined"] = c.joined_total;
  totals["admitted"] = c.admitted_total;
  totals["left"] = c.left_total;
  totals["expired_allowed_unused"] = c.expired_allowed_unused;
  totals["expired_session_idle"] = c.expired_session_idle;
  totals["expired_abandoned"] = c.expired_abandoned;
  totals["cleared"] = c.cleared_total;
  o["totals"] = std::move(totals);
  if (c.admit_rate_per_second) {
    o["admit_rate_per_second"] = *c.admit_rate_per_second;
  } else {
    o["admit_rate_per_second"] = nullptr;
  }
  return o;
}

namespace {

// Reads an unsigned integer field into *out; false (with *err set) if present and not one.
bool read_uint(const json::object& o, const char* key, uint64_t max, uint64_t* out,
               ApiResponse* err) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return true;
  int64_t n = -1;
  if (v->is_int64()) n = v->as_int64();
  if (v->is_uint64() && v->as_uint64() <= static_cast<uint64_t>(INT64_MAX))
    n = static_cast<int64_t>(v->as_uint64());
  if (n < 0 || static_cast<uint64_t>(n) > max) {
    *err =
        error_response(400, "invalid_field",
                       std::string(key) + " must be an integer from 0 to " + std::to_string(max));
    return false;
  }
  *out = static_cast<uint64_t>(n);
  return true;
}

bool read_bool(const json::object& o, const char* key, bool* out, ApiResponse* err) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return true;
  if (!v->is_bool()) {
    *err = error_response(400, "invalid_field", std::string(key) + " must be true or false");
    return false;
  }
  *out = v->as_bool();
  return true;
}

constexpr const char* kFields[] = {"capacity",
                                   "admission",
                                   "admit_per_second",
                                   "allowed_ttl_seconds",
                                   "session_ttl_seconds",
                                   "heartbeat_timeout_seconds",
                                   "max_waiting",
                                   "trust_user",
                                   "mode",
                                   "ip_joins_per_minute",
                                   "pow_difficulty"};

}  // namespace

bool read_room_fields(const json::object& o, RoomConfig* c, ApiResponse* err) {
  for (const auto& kv : o) {
    if (std::find(std::begin(kFields), std::end(kFields), kv.key()) == std::end(kFields) &&
        !is_gate_field(kv.key())) {
      *err = error_response(400, "invalid_field", "unknown field '" + std::string(kv.key()) + "'");
      return false;
    }
  }
  uint64_t v = 0;
  auto field32 = [&](const char* key, uint32_t* dst) {
    v = *dst;
    if (!read_uint(o, key, UINT32_MAX, &v, err)) return false;
    *dst = static_cast<uint32_t>(v);
    return true;
  };
  if (!field32("capacity", &c->capacity) || !field32("admit_per_second", &c->admit_per_second) ||
      !field32("allowed_ttl_seconds", &c->allowed_ttl_seconds) ||
      !field32("session_ttl_seconds", &c->session_ttl_seconds) ||
      !field32("heartbeat_timeout_seconds", &c->heartbeat_timeout_seconds) ||
      !field32("ip_joins_per_minute", &c->ip_joins_per_minute) ||
      !read_bool(o, "trust_user", &c->trust_user, err)) {
    return false;
  }
  v = c->max_waiting;
  if (!read_uint(o, "max_waiting", RoomConfig::kMaxWaitingCap, &v, err)) return false;
  c->max_waiting = v;
  if (const json::value* m = o.if_contains("mode")) {
    if (!m->is_string() || !parse_mode(m->as_string(), &c->mode)) {
      *err = error_response(400, "invalid_field",
                            "mode must be one of \"fifo\", \"random\", \"passthrough\", "
                            "\"reject\", \"queue_all\"");
      return false;
    }
  }
  if (const json::value* d = o.if_contains("pow_difficulty")) {
    if (d->is_string() && d->as_string() == "auto") {
      c->pow_difficulty = RoomConfig::kPowAuto;
    } else if (d->is_int64() && d->as_int64() >= 0 && d->as_int64() <= 32) {
      c->pow_difficulty = static_cast<uint8_t>(d->as_int64());
    } else if (d->is_uint64() && d->as_uint64() <= 32) {
      c->pow_difficulty = static_cast<uint8_t>(d->as_uint64());
    } else {
      *err = error_response(400, "invalid_field",
                            "pow_difficulty must be an integer from 0 to 32 (bits) or \"auto\"");
      return false;
    }
  }
  if (!read_gate_fields(o, c, err)) return false;
  if (const json::value* a = o.if_contains("admission")) {
    if (a->is_string() && a->as_string() == "auto") {
      c->admission = AdmissionMode::kAuto;
    } else if (a->is_string() && a->as_string() == "manual") {
      c->admission = AdmissionMode::kManual;
      if (!o.contains("admit_per_second")) c->admit_per_second = 0;
    } else {
      *err = error_response(400, "invalid_field", "admission must be \"auto\" or \"manual\"");
      return false;
    }
  }
  return true;
}

bool read_count(const json::object& o, const char* key, uint64_t max, uint64_t* out,
                ApiResponse* err) {
  return read_uint(o, key, max, out, err);
}

}  // namespace anteroom
