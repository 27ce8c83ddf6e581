// Api: the operator routes (rooms, admit, clear, list) and the protected service's verify.
#include <boost/json.hpp>

#include "server/app/api.h"
#include "server/app/json_text.h"
#include "server/app/room_json.h"

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

ApiResponse Api::put_room(std::string_view room, std::string_view body) const {
  ApiResponse err;
  auto o = parse_object(body, &err, true);
  if (!o) return err;
  auto existing = engine_.room_info(room);
  RoomConfig c = existing.is_ok() ? existing->config : options_.room;
  if (!read_room_fields(*o, &c, &err)) return err;
  // Only the settings: an event or a page put at the same moment is not undone.
  if (existing.is_ok()) c.parts = RoomConfig::kSettings;
  const bool existed = existing.is_ok();
  return answer_when([&](const Respond& respond) {
    engine_.put_room_async(
        room, c, [this, room = std::string(room), existed, respond](const Status& st) {
          if (!st.is_ok()) {
            return respond(st.code() == Code::kInvalidArgument
                               ? error_response(400, "invalid_field", st.message())
                               : engine_error(st));
          }
          auto info = engine_.room_info(room);
          if (!info.is_ok()) return respond(engine_error(info.status()));  // deleted meanwhile
          ApiResponse res;
          res.status = existed ? 200 : 201;
          res.body = to_json(room_json(info.value()));
          respond(std::move(res));
        });
  });
}

namespace {

// {"<what>": n} from a count, or the engine's error.
RoomService::Then<uint64_t> counted(const char* what, Respond respond) {
  return [what, respond = std::move(respond)](const Result<uint64_t>& n) {
    if (!n.is_ok()) return respond(engine_error(n.status()));
    ApiResponse res;
    res.body = std::string(R"({")") + what + R"(":)" + std::to_string(n.value()) + "}";
    respond(std::move(res));
  };
}

}  // namespace

ApiResponse Api::admit_route(std::string_view room, std::string_view body) const {
  ApiResponse err;
  auto o = parse_object(body, &err, false);
  if (!o) return err;
  uint64_t count = 0;
  if (!o->contains("count") || o->size() != 1) {
    return error_response(400, "invalid_field", "the body must be {\"count\": N}");
  }
  if (!read_count(*o, "count", 1'000'000, &count, &err)) return err;
  if (count == 0) return error_response(400, "invalid_field", "count must be from 1 to 1000000");
  return answer_when([&](const Respond& respond) {
    engine_.admit_async(room, count, counted("admitted", respond));
  });
}

ApiResponse Api::verify_route(std::string_view room, std::string_view body) const {
  ApiResponse err;
  auto o = parse_object(body, &err, false);
  if (!o) return err;
  const json::value* t = o->if_contains("token");
  const json::value* k = o->if_contains("key");
  if (t == nullptr || !t->is_string() || (k != nullptr && !k->is_string())) {
    return error_response(400, "invalid_field",
                          "the body must be {\"token\": \"...\"} or {\"token\": \"...\", "
                          "\"key\": \"...\"} (the key of a bound admission)");
  }
  // The admission cookie's value as it is (TOKEN~KEY) is a token with its key.
  const AdmissionParts given = split_admission(t->as_string());
  std::vector<std::string> keys;
  if (k != nullptr) keys.emplace_back(k->as_string());
  if (!given.key.empty()) keys.emplace_back(given.key);
  return answer_when([&](const Respond& respond) {
    use_token(room, given.token, keys,
              [this, room = std::string(room), respond](const Result<TicketDetail>& d) {
                if (!d.is_ok()) {
                  return respond(error_response(401, "invalid_token", d.status().message()));
                }
                json::object out;
                out["room"] = room;
                out["ticket"] = id_view(d->ticket.id);
                out["user"] = d->user;
                out["status"] = state_name(d->ticket.state);
                // A fresh token to the new idle deadline: the service keeps it for the next
                // refresh.
                out["token"] = token_for(room, d->ticket);
                out["expires_at"] =
                    (d->ticket.valid_until_ms + (now_ms() - engine_.clock().now_ms())) / 1000;
                ApiResponse res;
                res.body = json::serialize(out);
                respond(std::move(res));
              });
  });
}

ApiResponse Api::get_room(std::string_view room) const {
  auto info = engine_.room_info(room);
  if (!info.is_ok()) return engine_error(info.status());
  ApiResponse res;
  res.body = to_json(room_json(info.value()));
  return res;
}

ApiResponse Api::delete_room(std::string_view room) const {
  return answer_when([&](const Respond& respond) {
    engine_.delete_room_async(room, [respond](const Status& st) {
      ApiResponse res;
      res.status = 204;
      respond(st.is_ok() ? std::move(res) : engine_error(st));
    });
  });
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
  return answer_when(
      [&](const Respond& respond) { engine_.clear_async(room, counted("cleared", respond)); });
}

ApiResponse Api::cluster_route() const {
  const ClusterView* cluster = engine_.cluster_view();
  if (cluster == nullptr) {
    return error_response(404, "not_clustered", "this server runs alone (start it with --cluster)");
  }
  const ClusterInfo info = cluster->cluster_info();
  json::array nodes;
  for (const ClusterInfo::Node& n : info.nodes) {
    json::object o;
    o["name"] = n.name;
    o["heartbeat_ms"] = n.heartbeat_ms;
    o["reachable"] = n.reachable;
    json::array leases;
    for (const std::string& r : n.leases) leases.emplace_back(r);
    o["leases"] = std::move(leases);
    json::object applied;
    for (const ClusterInfo::Applied& a : n.applied) {
      applied[a.room] = json::object{{"stream_id", a.stream_id}, {"records", a.records}};
    }
    o["applied"] = std::move(applied);
    json::array lost;
    for (const std::string& r : n.lost) lost.emplace_back(r);
    o["lost"] = std::move(lost);
    nodes.push_back(std::move(o));
  }
  json::object out;
  out["self"] = info.self;
  out["redis_reachable"] = info.redis_reachable;
  out["nodes"] = std::move(nodes);
  ApiResponse res;
  res.body = json::serialize(out);
  return res;
}

ApiResponse Api::reseed_route() const {
  ClusterControl* control = engine_.cluster_control();
  if (control == nullptr) {
    return error_response(404, "not_clustered", "this server runs alone (start it with --cluster)");
  }
  return answer_when([control](const Respond& respond) {
    control->reseed([respond](const Result<std::vector<Reseeded>>& done) {
      if (!done.is_ok()) return respond(engine_error(done.status()));
      json::object rooms;
      for (const Reseeded& r : done.value()) {
        static constexpr const char* kWhat[] = {"reseeded", "intact", "refused"};
        json::object o{{"result", kWhat[static_cast<size_t>(r.what)]}, {"records", r.records}};
        if (!r.why.empty()) o["why"] = r.why;
        rooms[r.room] = std::move(o);
      }
      ApiResponse res;
      res.body = json::serialize(json::object{{"rooms", std::move(rooms)}});
      respond(std::move(res));
    });
  });
}

ApiResponse Api::snapshot_route() const {
  return answer_when([this](const Respond& respond) {
    engine_.snapshot_async([this, respond](const Result<RoomService::SnapshotInfo>& info) {
      if (!info.is_ok()) {
        const unsigned code = options_.persistence ? 503 : 409;
        return respond(error_response(code,
                                      options_.persistence ? "snapshot_failed" : "persistence_off",
                                      info.status().message()));
      }
      ApiResponse r;
      r.body = R"({"bytes_before":)" + std::to_string(info->bytes_before) + R"(,"bytes_after":)" +
               std::to_string(info->bytes_after) + R"(,"tickets":)" +
               std::to_string(info->tickets) + "}";
      respond(std::move(r));
    });
  });
}

}  // namespace anteroom
