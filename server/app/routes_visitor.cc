// Api: the visitor routes of a ticket (status, leave, events) and the WebSocket (the join is
// in join.cc, the gate and the admission cookie in gate.cc).
#include <boost/json.hpp>

#include "server/app/api.h"

namespace anteroom {
namespace json = boost::json;

ApiResponse Api::unauthorized() const {
  ApiResponse res =
      error_response(401, "unauthorized", "this route needs Authorization: Bearer <admin key>");
  res.headers.emplace_back("WWW-Authenticate", "Bearer");
  return res;
}

ApiResponse Api::ws_route(std::string_view room) const {
  if (auto info = engine_.room_info(room); !info.is_ok()) return engine_error(info.status());
  ApiResponse res;
  res.upgrade = ApiResponse::Upgrade::kWebSocket;
  res.room = std::string(room);
  return res;
}

ApiResponse Api::leave_route(std::string_view room, std::string_view ticket) const {
  return answer_when([&](const Respond& respond) {
    engine_.leave_async(room, ticket, [respond](const Result<TicketView>& v) {
      if (!v.is_ok()) return respond(engine_error(v.status()));
      ApiResponse res;
      res.status = 204;
      respond(std::move(res));
    });
  });
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
