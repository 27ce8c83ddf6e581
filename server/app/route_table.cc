// The route table and its matching (route_table.h). A new route is a Route value, a row here,
// its handler, and its entry in docs/openapi.yaml.
#include "server/app/route_table.h"

#include "server/app/dashboard_page.h"

namespace anteroom {

uint8_t method_bit(std::string_view method) {
  if (method == "GET") return kGet;
  if (method == "HEAD") return kHead;
  if (method == "POST") return kPost;
  if (method == "PUT") return kPut;
  if (method == "DELETE") return kDelete;
  return method.empty() ? 0 : kOther;
}

std::string allow_header(uint8_t methods) {
  static constexpr std::pair<uint8_t, std::string_view> kNames[] = {
      {kGet, "GET"}, {kHead, "HEAD"}, {kPost, "POST"}, {kPut, "PUT"}, {kDelete, "DELETE"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((methods & bit) == 0) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

bool match_pattern(std::string_view pattern, std::string_view path, std::string_view* room,
                   std::string_view* ticket) {
  // Segment by segment: a literal must be equal, a parameter takes one whole segment.
  size_t i = 0, j = 0;
  while (i < pattern.size() && j < path.size()) {
    if (pattern[i] != '{') {
      if (pattern[i] != path[j]) return false;
      ++i, ++j;
      continue;
    }
    const size_t close = pattern.find('}', i);
    const std::string_view name = pattern.substr(i + 1, close - i - 1);
    const size_t end = name == "path" ? path.size() : std::min(path.find('/', j), path.size());
    (name == "room" ? *room : *ticket) = path.substr(j, end - j);
    i = close + 1, j = end;
  }
  // A parameter may be empty ("/v1/rooms/" names the room ""): the room check refuses it.
  if (i < pattern.size() && pattern[i] == '{' && j == path.size()) {
    const size_t close = pattern.find('}', i);
    (pattern.substr(i + 1, close - i - 1) == "room" ? *room : *ticket) = {};
    i = close + 1;
  }
  return i == pattern.size() && j == path.size();
}

// A friend of Api: the handlers below call its private routes.
struct RouteTable {
  using A = const Api&;
  using C = const RouteCall&;
  static constexpr Audience kV = Audience::kVisitor, kO = Audience::kOperator, kB = Audience::kBoth;
  static constexpr Auth kNone = Auth::kNone, kAdmin = Auth::kAdmin;
  static constexpr RouteRow kRows[] = {
      // Visitors: the busy ones first.
      {kGet | kHead, "/v1/rooms/{room}/tickets/{ticket}", Route::kStatus, "status", kV, false,
       false, kNone, [](A a, C c) { return a.ticket_read(c.room, c.ticket, false); }},
      {kPost, "/v1/rooms/{room}/tickets", Route::kJoin, "join", kV, false, false, kNone,
       [](A a, C c) { return a.join_route(c.room, c.req.body, c.req.client); }},
      {kGet | kHead, "/v1/gate/{room}", Route::kGate, "gate", kV, true, false, kNone,
       [](A a, C c) { return a.gate_route(c.room, c.req.cookie); }},
      // The forward-auth gate: any method (Envoy asks with the visitor's), reserved like
      // the gate above (it serves visitors already admitted).
      {kAnyMethod, "/v1/gate", Route::kForwardAuth, "forward_auth", kV, true, false, kNone,
       [](A a, C c) { return a.forward_auth(c.req, std::nullopt); }},
      {kAnyMethod, "/v1/authz/{path}", Route::kForwardAuth, "forward_auth", kV, true, false, kNone,
       [](A a, C c) {
         const std::string path =
             std::string(c.ticket) + (c.query.empty() ? "" : "?" + std::string(c.query));
         return a.forward_auth(c.req, path);
       }},
      {kGet | kHead, "/v1/enter", Route::kEnter, "enter", kV, true, false, kNone,
       [](A a, C c) { return a.enter_route(c.req, c.query); }},
      {kGet, "/v1/rooms/{room}/tickets/{ticket}/events", Route::kEvents, "events", kV, false, false,
       kNone, [](A a, C c) { return a.ticket_read(c.room, c.ticket, true); }},
      {kDelete, "/v1/rooms/{room}/tickets/{ticket}", Route::kLeave, "leave", kV, false, false,
       kNone, [](A a, C c) { return a.leave_route(c.room, c.ticket); }},
      {kPost, "/v1/rooms/{room}/tickets/{ticket}/cookie", Route::kCookie, "cookie", kV, false,
       false, kNone, [](A a, C c) { return a.cookie_route(c.room, c.ticket, c.req.body); }},
      {kGet, "/v1/rooms/{room}/ws", Route::kWebSocket, "websocket", kV, false, true, kNone,
       [](A a, C c) { return a.ws_route(c.room); }},
      {kGet | kHead, "/wait/{room}", Route::kWaitPage, "wait_page", kV, false, false, kNone,
       [](A a, C c) { return a.wait_route(c.req, c.room, c.query); }},
      // Any method: nginx's error_page keeps the visitor's (a POST not admitted gets the
      // gate's JSON 429 here, not 405).
      {kAnyMethod, "/wait", Route::kWaitPage, "wait_page", kV, false, false, kNone,
       [](A a, C c) { return a.wait_any_route(c.req, c.query); }},
      {kGet, "/v1/rooms/{room}/challenge", Route::kChallenge, "challenge", kV, false, false, kNone,
       [](A a, C c) { return a.challenge_route(c.room); }},
      {kGet | kHead, "/.well-known/jwks.json", Route::kJwks, "jwks", kV, false, false, kNone,
       [](A a, C) { return a.jwks_route(); }},
      // An event and a page: read by visitors, written by operators.
      {kGet | kHead, "/v1/rooms/{room}/event", Route::kEvent, "event", kV, false, false, kNone,
       [](A a, C c) { return a.event_route(c.req, c.room); }},
      {kPut | kDelete, "/v1/rooms/{room}/event", Route::kEvent, "event", kO, false, false, kAdmin,
       [](A a, C c) { return a.event_route(c.req, c.room); }},
      {kGet | kHead, "/v1/rooms/{room}/event/draw", Route::kDraw, "draw", kV, false, false, kNone,
       [](A a, C c) { return a.draw_route(c.req, c.room); }},
      {kGet | kHead, "/v1/rooms/{room}/page", Route::kPage, "page", kV, false, false, kNone,
       [](A a, C c) { return a.page_route(c.req, c.room); }},
      {kPut | kDelete, "/v1/rooms/{room}/page", Route::kPage, "page", kO, false, false, kAdmin,
       [](A a, C c) { return a.page_route(c.req, c.room); }},
      // Both listeners: the probes and the protected service's verify.
      {kGet | kHead, "/healthz", Route::kHealth, "healthz", kB, true, false, kNone,
       [](A a, C) { return a.probe_route(false); }},
      {kGet | kHead, "/readyz", Route::kReady, "readyz", kB, true, false, kNone,
       [](A a, C) { return a.probe_route(true); }},
      {kPost, "/v1/rooms/{room}/verify", Route::kVerify, "verify", kB, true, false, Auth::kVerify,
       [](A a, C c) { return a.verify_route(c.room, c.req.body); }},
      // Operators. The dashboard's page holds no data (its calls carry the key) and is
      // reserved: the operator needs it most in a flood.
      {kGet | kHead, "/metrics", Route::kMetrics, "metrics", kO, true, false, Auth::kScrape,
       [](A a, C) { return a.metrics_route(); }},
      {kGet | kHead, "/admin", Route::kDashboard, "dashboard", kO, true, false, kNone,
       [](A, C c) { return dashboard_page(c.req.accept_language); }},
      {kGet, "/v1/admin/stream", Route::kDashboardStream, "dashboard_stream", kO, false, false,
       kAdmin, [](A a, C) { return a.dashboard_stream_route(); }},
      {kGet, "/v1/admin/rooms/{room}/history", Route::kRoomHistory, "room_history", kO, false,
       false, kAdmin, [](A a, C c) { return a.room_history_route(c.room); }},
      {kPost, "/v1/admin/snapshot", Route::kSnapshot, "snapshot", kO, false, false, kAdmin,
       [](A a, C) { return a.snapshot_route(); }},
      {kGet | kHead, "/v1/cluster", Route::kCluster, "cluster", kO, false, false, kAdmin,
       [](A a, C) { return a.cluster_route(); }},
      {kPost, "/v1/cluster/reseed", Route::kClusterReseed, "cluster_reseed", kO, false, false,
       kAdmin, [](A a, C) { return a.reseed_route(); }},
      {kGet, "/v1/rooms", Route::kListRooms, "list_rooms", kO, false, false, kAdmin,
       [](A a, C) { return a.list_rooms(); }},
      {kGet, "/v1/rooms/{room}", Route::kGetRoom, "get_room", kO, false, false, kAdmin,
       [](A a, C c) { return a.get_room(c.room); }},
      {kPut, "/v1/rooms/{room}", Route::kPutRoom, "put_room", kO, false, false, kAdmin,
       [](A a, C c) { return a.put_room(c.room, c.req.body); }},
      {kDelete, "/v1/rooms/{room}", Route::kDeleteRoom, "delete_room", kO, false, false, kAdmin,
       [](A a, C c) { return a.delete_room(c.room); }},
      {kPost, "/v1/rooms/{room}/admit", Route::kAdmit, "admit", kO, false, false, kAdmin,
       [](A a, C c) { return a.admit_route(c.room, c.req.body); }},
      {kPost, "/v1/rooms/{room}/clear", Route::kClear, "clear", kO, false, false, kAdmin,
       [](A a, C c) { return a.clear_route(c.room); }},
      {kGet | kPost, "/v1/rooms/{room}/passes", Route::kPasses, "passes", kO, false, false, kAdmin,
       [](A a, C c) { return a.passes_route(c.req, c.room, {}); }},
      {kDelete, "/v1/rooms/{room}/passes/{id}", Route::kPasses, "passes", kO, false, false, kAdmin,
       [](A a, C c) { return a.passes_route(c.req, c.room, c.ticket); }},
  };
};

std::span<const RouteRow> route_table() { return RouteTable::kRows; }

const char* route_name(Route r) {
  for (const RouteRow& row : RouteTable::kRows) {
    if (row.route == r) return row.name;
  }
  switch (r) {
    case Route::kNotFound:
      return "not_found";
    case Route::kCrossSite:
      return "cross_site";
    default:
      return "unrouted";
  }
}

}  // namespace anteroom
