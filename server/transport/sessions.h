// The three kinds of connection. Each runs on its own strand; each async step is a
// do_x()/on_x() pair (the Beast examples' shape).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "server/transport/beast.h"
#include "server/transport/context.h"

namespace anteroom {

// Reads requests on a keep-alive connection and answers them; hands the connection to an
// SSE or WebSocket session when the route asks for one. `in_reserve`: accepted into the
// operator reserve (one request, a short idle timeout, then closed). `operator_listener`:
// accepted by the --admin-listen listener.
void run_http_session(tcp::socket socket, ServerContext& ctx, ConnectionSlot slot,
                      bool in_reserve = false, bool operator_listener = false);

// Server-Sent Events for one ticket: `event: status` on every change, at least every
// --stream-keepalive seconds, and a last one when the ticket is admitted or ends.
void run_sse_session(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot,
                     std::string room, std::string ticket);

// What a stream gets that raced past the route's --max-streams-per-ticket check and was
// refused by the push hub: a whole 429 too_many_streams, then the connection closes.
std::shared_ptr<const std::string> too_many_streams_answer();

// The operator dashboard's stream: `first` (the newest frame, may be null) at once, then
// whatever the push hub broadcasts to kDashboardStreams.
void run_dashboard_session(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot,
                           std::shared_ptr<const std::string> first);
// The push hub's name for the dashboards' streams: not a valid room name, so no room's.
inline constexpr std::string_view kDashboardStreams = "#dashboards";

// Seed 000's WebSocket protocol for one room.
void run_ws_session(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot,
                    http::request<http::string_body> upgrade, std::string room);

// Writes a fixed 503 and closes: the answer past --max-connections (`per_address` false) or
// --max-connections-per-address. Its X-Anteroom-Limit header names the flag that raises the
// limit it met, so that a load generator can say which (docs/api.md).
void refuse_connection(tcp::socket socket, bool per_address);

}  // namespace anteroom
