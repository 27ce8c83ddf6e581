// Api: the /v1/rooms tree (visitor and operator routes), tokens, and the gate.
#include <boost/json.hpp>

#include "server/app/api.h"

namespace anteroom {
namespace json = boost::json;

namespace {

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
  res.body = json::serialize(room_json(engine_.room_info(room).value()));
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

Result<TicketDetail> Api::use_token(std::string_view room, std::string_view token) const {
  TokenError why = TokenError::kMalformed;
  auto claims = tokens_.verify(token, room, unix_now_s(), &why);
  if (!claims) return Status(Code::kInvalidArgument, token_error_text(why));
  auto d = engine_.activate(room, claims->ticket);
  if (!d.is_ok()) {
    return Status(Code::kInvalidArgument,
                  "the admission is no longer valid: " + d.status().message());
  }
  return d;
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

ApiResponse Api::gate_route(std::string_view room, std::string_view cookie) const {
  const std::string name = "anteroom_" + std::string(room) + "=";
  for (size_t i = 0; i < cookie.size();) {
    while (i < cookie.size() && (cookie[i] == ' ' || cookie[i] == ';')) ++i;
    size_t end = cookie.find(';', i);
    if (end == std::string_view::npos) end = cookie.size();
    std::string_view pair = cookie.substr(i, end - i);
    if (pair.starts_with(name) && use_token(room, pair.substr(name.size())).is_ok()) {
      ApiResponse res;
      res.status = 204;
      return res;
    }
    i = end;
  }
  return error_response(401, "no_admission",
                        "no valid admission for room '" + std::string(room) + "'");
}

ApiResponse Api::rooms_route(const ApiRequest& req, const std::vector<std::string_view>& p) const {
  const std::string_view m = req.method;
  auto with = [](ApiResponse r, Route route) {
    r.route = route;
    return r;
  };
  auto admin_only = [&](Route r) -> std::optional<ApiResponse> {
    if (authorized(req.authorization)) return std::nullopt;
    ApiResponse res =
        error_response(401, "unauthorized", "this route needs Authorization: Bearer <admin key>");
    res.headers.emplace_back("WWW-Authenticate", "Bearer");
    return with(res, r);
  };
  if (p.size() == 2) {
    if (m != "GET") return method_not_allowed("GET", Route::kListRooms);
    if (auto denied = admin_only(Route::kListRooms)) return *denied;
    json::array rooms;
    for (const RoomInfo& r : engine_.rooms()) rooms.push_back(room_json(r));
    json::object o;
    o["rooms"] = std::move(rooms);
    ApiResponse res;
    res.body = json::serialize(o);
    return with(res, Route::kListRooms);
  }
  const std::string_view room = p[2];
  if (!valid_room_name(room)) {
    return with(error_response(400, "invalid_room_name",
                               "room names are 1-64 characters of A-Z a-z 0-9 _ -"),
                Route::kNotFound);
  }
  if (p.size() == 3) {
    Route r = m == "PUT" ? Route::kPutRoom : m == "DELETE" ? Route::kDeleteRoom : Route::kGetRoom;
    if (m != "PUT" && m != "GET" && m != "DELETE") return method_not_allowed("GET, PUT, DELETE", r);
    if (auto denied = admin_only(r)) return *denied;
    if (m == "PUT") return with(put_room(room, req.body), r);
    if (m == "DELETE") {
      Status st = engine_.delete_room(room);
      ApiResponse res;
      res.status = 204;
      return with(st.is_ok() ? res : engine_error(st), r);
    }
    auto info = engine_.room_info(room);
    if (!info.is_ok()) return with(engine_error(info.status()), r);
    ApiResponse res;
    res.body = json::serialize(room_json(info.value()));
    return with(res, r);
  }
  const std::string_view what = p[3];
  if (p.size() == 4 && what == "tickets") {
    if (m != "POST") return method_not_allowed("POST", Route::kJoin);
    return with(join_route(room, req.body), Route::kJoin);
  }
  if (p.size() == 4 && (what == "admit" || what == "clear" || what == "verify")) {
    Route r = what == "admit" ? Route::kAdmit : what == "clear" ? Route::kClear : Route::kVerify;
    if (m != "POST") return method_not_allowed("POST", r);
    if (auto denied = admin_only(r)) return *denied;
    if (what == "admit") return with(admit_route(room, req.body), r);
    if (what == "verify") return with(verify_route(room, req.body), r);
    auto n = engine_.clear(room);
    if (!n.is_ok()) return with(engine_error(n.status()), r);
    ApiResponse res;
    res.body = R"({"cleared":)" + std::to_string(n.value()) + "}";
    return with(res, r);
  }
  if (p.size() == 4 && what == "ws") {
    if (m != "GET") return method_not_allowed("GET", Route::kWebSocket);
    if (auto info = engine_.room_info(room); !info.is_ok()) {
      return with(engine_error(info.status()), Route::kWebSocket);
    }
    ApiResponse res;
    res.upgrade = ApiResponse::Upgrade::kWebSocket;
    res.room = std::string(room);
    return with(res, Route::kWebSocket);
  }
  if ((p.size() == 5 || p.size() == 6) && what == "tickets") {
    const std::string_view ticket = p[4];
    if (p.size() == 6) {
      if (p[5] != "events")
        return with(error_response(404, "not_found", "no such route"), Route::kNotFound);
      if (m != "GET") return method_not_allowed("GET", Route::kEvents);
      auto v = engine_.status(room, ticket);
      if (!v.is_ok()) return with(engine_error(v.status()), Route::kEvents);
      ApiResponse res;
      res.upgrade = ApiResponse::Upgrade::kSse;
      res.room = std::string(room);
      res.ticket = std::string(ticket);
      return with(res, Route::kEvents);
    }
    if (m == "GET" || m == "HEAD") {
      auto v = engine_.status(room, ticket);
      if (!v.is_ok()) return with(engine_error(v.status()), Route::kStatus);
      ApiResponse res;
      res.body = status_json(room, v.value());
      return with(res, Route::kStatus);
    }
    if (m == "DELETE") {
      auto v = engine_.leave(room, ticket);
      if (!v.is_ok()) return with(engine_error(v.status()), Route::kLeave);
      ApiResponse res;
      res.status = 204;
      return with(res, Route::kLeave);
    }
    return method_not_allowed("GET, DELETE", Route::kStatus);
  }
  return with(error_response(404, "not_found", "no such route"), Route::kNotFound);
}

}  // namespace anteroom
