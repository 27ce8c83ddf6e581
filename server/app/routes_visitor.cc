// Api: the visitor routes (join, status, leave, events, WebSocket), and how a request under
// /v1/rooms finds its route (the gate and the admission cookie are in gate.cc).
#include <boost/json.hpp>

#include "server/app/api.h"

namespace anteroom {
namespace json = boost::json;

namespace {

ApiResponse with(ApiResponse r, Route route) {
  r.route = route;
  return r;
}

ApiResponse not_found() { return error_response(404, "not_found", "no such route"); }

}  // namespace

ApiResponse Api::unauthorized() const {
  ApiResponse res =
      error_response(401, "unauthorized", "this route needs Authorization: Bearer <admin key>");
  res.headers.emplace_back("WWW-Authenticate", "Bearer");
  return res;
}

ApiResponse Api::rooms_route(const ApiRequest& req, const std::vector<std::string_view>& p) const {
  const std::string_view m = req.method;
  if (p.size() == 2) {
    if (m != "GET") return method_not_allowed("GET", Route::kListRooms);
    if (!authorized(req.authorization)) return with(unauthorized(), Route::kListRooms);
    return with(list_rooms(), Route::kListRooms);
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
    if (!authorized(req.authorization)) return with(unauthorized(), r);
    return with(room_route(req, room), r);
  }
  const std::string_view what = p[3];
  if (p.size() == 4 && what == "tickets") {
    if (m != "POST") return method_not_allowed("POST", Route::kJoin);
    return with(join_route(room, req.body, req.client), Route::kJoin);
  }
  if (p.size() == 4 && (what == "admit" || what == "clear" || what == "verify")) {
    Route r = what == "admit" ? Route::kAdmit : what == "clear" ? Route::kClear : Route::kVerify;
    if (m != "POST") return method_not_allowed("POST", r);
    const bool allowed =
        what == "verify" ? may_verify(req.authorization) : authorized(req.authorization);
    if (!allowed) return with(unauthorized(), r);
    if (what == "admit") return with(admit_route(room, req.body), r);
    if (what == "verify") return with(verify_route(room, req.body), r);
    return with(clear_route(room), r);
  }
  if (p.size() == 4 && what == "challenge") {
    if (m != "GET") return method_not_allowed("GET", Route::kChallenge);
    return with(challenge_route(room), Route::kChallenge);
  }
  if (p.size() == 4 && what == "page") {
    if (m != "GET" && m != "HEAD" && m != "PUT" && m != "DELETE") {
      return method_not_allowed("GET, HEAD, PUT, DELETE", Route::kPage);
    }
    return with(page_route(req, room), Route::kPage);
  }
  if (p.size() == 4 && what == "event") {
    if (m != "GET" && m != "HEAD" && m != "PUT" && m != "DELETE") {
      return method_not_allowed("GET, HEAD, PUT, DELETE", Route::kEvent);
    }
    return with(event_route(req, room), Route::kEvent);
  }
  if (p.size() == 5 && what == "event" && p[4] == "draw") {
    if (m != "GET" && m != "HEAD") return method_not_allowed("GET, HEAD", Route::kDraw);
    return with(draw_route(req, room), Route::kDraw);
  }
  if (p.size() == 4 && what == "ws") {
    if (m != "GET") return method_not_allowed("GET", Route::kWebSocket);
    return with(ws_route(room), Route::kWebSocket);
  }
  if ((p.size() == 5 || p.size() == 6) && what == "tickets") return ticket_route(req, room, p);
  return with(not_found(), Route::kNotFound);
}

ApiResponse Api::ws_route(std::string_view room) const {
  if (auto info = engine_.room_info(room); !info.is_ok()) return engine_error(info.status());
  ApiResponse res;
  res.upgrade = ApiResponse::Upgrade::kWebSocket;
  res.room = std::string(room);
  return res;
}

// /v1/rooms/{room}/tickets/{ticket} and .../events.
ApiResponse Api::ticket_route(const ApiRequest& req, std::string_view room,
                              const std::vector<std::string_view>& p) const {
  const std::string_view m = req.method;
  const std::string_view ticket = p[4];
  if (p.size() == 6 && p[5] == "cookie") {
    if (m != "POST") return method_not_allowed("POST", Route::kCookie);
    return with(cookie_route(room, ticket, req.body), Route::kCookie);
  }
  if (p.size() == 6) {
    if (p[5] != "events") return with(not_found(), Route::kNotFound);
    if (m != "GET") return method_not_allowed("GET", Route::kEvents);
    return with(ticket_read(room, ticket, true), Route::kEvents);
  }
  if (m == "GET" || m == "HEAD") return with(ticket_read(room, ticket, false), Route::kStatus);
  if (m == "DELETE") {
    return with(answer_when([&](const Respond& respond) {
                  engine_.leave_async(room, ticket, [respond](const Result<TicketView>& v) {
                    if (!v.is_ok()) return respond(engine_error(v.status()));
                    ApiResponse res;
                    res.status = 204;
                    respond(std::move(res));
                  });
                }),
                Route::kLeave);
  }
  return method_not_allowed("GET, DELETE", Route::kStatus);
}

ApiResponse Api::ticket_read_now(std::string_view room, std::string_view ticket, bool events,
                                 bool heartbeat) const {
  auto v = heartbeat ? engine_.status(room, ticket) : engine_.peek(room, ticket);
  if (!v.is_ok()) return engine_error(v.status());
  if (!events) {
    ApiResponse res;
    res.body = status_json(room, v.value());
    return res;
  }
  if (!stream_allowed(room, ticket)) {
    return error_response(429, "too_many_streams",
                          "this ticket already has its most open streams; close one");
  }
  ApiResponse res;
  res.upgrade = ApiResponse::Upgrade::kSse;
  res.room = std::string(room);
  res.ticket = std::string(ticket);
  return res;
}

ApiResponse Api::ticket_read(std::string_view room, std::string_view ticket, bool events) const {
  ApiResponse res = ticket_read_now(room, ticket, events, true);
  if (res.status != 404) return res;
  // Perhaps a ticket this copy has not applied yet (a cluster node behind the one that
  // answered the join): look again once it has caught up.
  return answer_when([&](const Respond& respond) {
    const bool waiting = engine_.when_caught_up(
        room, ticket,
        [this, room = std::string(room), ticket = std::string(ticket), events, respond] {
          respond(ticket_read_now(room, ticket, events, true));
        });
    if (!waiting) respond(std::move(res));
  });
}

}  // namespace anteroom
