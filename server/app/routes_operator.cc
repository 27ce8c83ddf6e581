// Api: the operator routes (rooms, admit, clear, list) and the protected service's verify.
#include <boost/json.hpp>

#include "server/app/api.h"
#include "server/app/json_text.h"

namespace anteroom {
namespace json = boost::json;

std::optional<json::object> parse_object(std::string_view body, ApiResponse* err,
                                         bool allow_empty) {
  if (allow_empty && body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return json::object{};
  }
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) {
    *err = error_response(400, "invalid_json", "the body is not valid JSON");
    return std::nullopt;
  }
  if (!v.is_object()) {
    *err = error_response(400, "invalid_field", "the body must be a JSON object");
    return std::nullopt;
  }
  return std::move(v.as_object());
}

namespace {

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

}  // namespace

ApiResponse Api::put_room(std::string_view room, std::string_view body) const {
  ApiResponse err;
  auto o = parse_object(body, &err, true);
  if (!o) return err;
  static const char* kFields[] = {"capacity",
                                  "admission",
                                  "admit_per_second",
                                  "allowed_ttl_seconds",
                                  "session_ttl_seconds",
                                  "heartbeat_timeout_seconds",
                                  "max_waiting"};
  for (const auto& kv : *o) {
    if (std::find(std::begin(kFields), std::end(kFields), kv.key()) == std::end(kFields)) {
      return error_response(400, "invalid_field", "unknown field '" + std::string(kv.key()) + "'");
    }
  }
  auto existing = engine_.room_info(room);
  RoomConfig c = existing.is_ok() ? existing->config : options_.room;
  uint64_t v = 0;
  auto field32 = [&](const char* key, uint32_t* dst) {
    v = *dst;
    if (!read_uint(*o, key, UINT32_MAX, &v, &err)) return false;
    *dst = static_cast<uint32_t>(v);
    return true;
  };
  if (!field32("capacity", &c.capacity) || !field32("admit_per_second", &c.admit_per_second) ||
      !field32("allowed_ttl_seconds", &c.allowed_ttl_seconds) ||
      !field32("session_ttl_seconds", &c.session_ttl_seconds) ||
      !field32("heartbeat_timeout_seconds", &c.heartbeat_timeout_seconds)) {
    return err;
  }
  v = c.max_waiting;
  if (!read_uint(*o, "max_waiting", UINT64_MAX >> 1, &v, &err)) return err;
  c.max_waiting = v;
  if (const json::value* a = o->if_contains("admission")) {
    if (a->is_string() && a->as_string() == "auto") {
      c.admission = AdmissionMode::kAuto;
    } else if (a->is_string() && a->as_string() == "manual") {
      c.admission = AdmissionMode::kManual;
      if (!o->contains("admit_per_second")) c.admit_per_second = 0;
    } else {
      return error_response(400, "invalid_field", "admission must be \"auto\" or \"manual\"");
    }
  }
  if (Status st = engine_.put_room(room, c); !st.is_ok()) {
    return st.code() == Code::kInvalidArgument ? error_response(400, "invalid_field", st.message())
                                               : engine_error(st);
  }
  ApiResponse res;
  res.status = existing.is_ok() ? 200 : 201;
  res.body = to_json(room_json(engine_.room_info(room).value()));
  return res;
}

ApiResponse Api::admit_route(std::string_view room, std::string_view body) const {
  ApiResponse err;
  auto o = parse_object(body, &err, false);
  if (!o) return err;
  uint64_t count = 0;
  if (!o->contains("count") || o->size() != 1) {
    return error_response(400, "invalid_field", "the body must be {\"count\": N}");
  }
  if (!read_uint(*o, "count", 1'000'000, &count, &err)) return err;
  auto n = engine_.admit(room, count);
  if (!n.is_ok()) return engine_error(n.status());
  ApiResponse res;
  res.body = R"({"admitted":)" + std::to_string(n.value()) + "}";
  return res;
}

ApiResponse Api::verify_route(std::string_view room, std::string_view body) const {
  ApiResponse err;
  auto o = parse_object(body, &err, false);
  if (!o) return err;
  const json::value* t = o->if_contains("token");
  if (t == nullptr || !t->is_string()) {
    return error_response(400, "invalid_field", "the body must be {\"token\": \"...\"}");
  }
  auto d = use_token(room, t->as_string());
  if (!d.is_ok()) return error_response(401, "invalid_token", d.status().message());
  json::object out;
  out["room"] = room;
  out["ticket"] = id_view(d->ticket.id);
  out["user"] = d->user;
  out["status"] = state_name(d->ticket.state);
  ApiResponse res;
  res.body = json::serialize(out);
  return res;
}

ApiResponse Api::room_route(const ApiRequest& req, std::string_view room) const {
  const std::string_view m = req.method;
  if (m == "PUT") return put_room(room, req.body);
  if (m == "DELETE") {
    Status st = engine_.delete_room(room);
    ApiResponse res;
    res.status = 204;
    return st.is_ok() ? res : engine_error(st);
  }
  auto info = engine_.room_info(room);
  if (!info.is_ok()) return engine_error(info.status());
  ApiResponse res;
  res.body = to_json(room_json(info.value()));
  return res;
}

ApiResponse Api::list_rooms() const {
  json::array rooms;
  for (const RoomInfo& r : engine_.rooms()) rooms.push_back(room_json(r));
  json::object o;
  o["rooms"] = std::move(rooms);
  ApiResponse res;
  res.body = to_json(o);
  return res;
}

ApiResponse Api::clear_route(std::string_view room) const {
  auto n = engine_.clear(room);
  if (!n.is_ok()) return engine_error(n.status());
  ApiResponse res;
  res.body = R"({"cleared":)" + std::to_string(n.value()) + "}";
  return res;
}

ApiResponse Api::snapshot_route() const {
  auto info = engine_.snapshot();
  if (!info.is_ok()) {
    unsigned code = options_.persistence ? 503 : 409;
    return error_response(code, options_.persistence ? "snapshot_failed" : "persistence_off",
                          info.status().message());
  }
  ApiResponse r;
  r.body = R"({"bytes_before":)" + std::to_string(info->bytes_before) + R"(,"bytes_after":)" +
           std::to_string(info->bytes_after) + R"(,"tickets":)" + std::to_string(info->tickets) +
           "}";
  return r;
}

}  // namespace anteroom
