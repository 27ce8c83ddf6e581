// The Api called directly, without sockets: the route table's rows (server/app/route_table.h)
// reach their handlers, and what a row states (methods, listener, reserve, key, room name)
// is what Api::handle enforces.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>

#include "engine/clock.h"
#include "engine/sharded_engine.h"
#include "server/app/api.h"
#include "server/app/route_table.h"

namespace anteroom {
namespace {

constexpr const char* kKey = "direct-admin-key-0123456789";
constexpr const char* kBearer = "Bearer direct-admin-key-0123456789";

std::string ticket_of(const std::string& body) {
  return std::string(boost::json::parse(body).at("ticket").as_string());
}

// Whether an answer is the router's own "no such route" (not a handler's 404).
bool no_route(const ApiResponse& r) {
  return r.status == 404 && r.body.find(R"("code":"not_found")") != std::string::npos;
}

// The routes reach the engine only through RoomService (engine/room_service.h), which has no
// blocking write: a route cannot hold an I/O thread on one. Engine has them, for start-up and
// tests; these fail to compile if the routes' view gains one or the Api holds more.
template <typename S>
concept Joins = requires(S& s) {
  s.join("r", JoinRequest{});
};
template <typename S>
concept Leaves = requires(S& s) {
  s.leave("r", "t");
};
template <typename S>
concept Activates = requires(S& s) {
  s.activate("r", "t");
};
template <typename S>
concept Admits = requires(S& s) {
  s.admit("r", 1);
};
template <typename S>
concept Clears = requires(S& s) {
  s.clear("r");
};
template <typename S>
concept PutsRooms = requires(S& s, const RoomConfig& c) {
  s.put_room("r", c);
};
template <typename S>
concept DeletesRooms = requires(S& s) {
  s.delete_room("r");
};
template <typename S>
concept Snapshots = requires(S& s) {
  s.snapshot();
};
template <typename S>
concept BlocksOnEveryWrite = Joins<S> && Leaves<S> && Activates<S> && Admits<S> && Clears<S> &&
    PutsRooms<S> && DeletesRooms<S> && Snapshots<S>;
template <typename S>
concept BlocksOnAnyWrite = Joins<S> || Leaves<S> || Activates<S> || Admits<S> || Clears<S> ||
    PutsRooms<S> || DeletesRooms<S> || Snapshots<S>;
static_assert(BlocksOnEveryWrite<Engine>);  // the concepts do see a blocking write
static_assert(!BlocksOnAnyWrite<RoomService>);
static_assert(std::is_same_v<decltype(std::declval<const Api&>().engine()), RoomService&>);

class ApiDirect : public ::testing::Test {
 protected:
  void SetUp() override { make_api(); }

  void make_api() {
    EngineOptions e;
    e.shards = 1;
    e.max_rooms = 16;
    e.clock = clock_;
    engine_ = make_sharded_engine(e);
    metrics_.read_engine(engine_.get());
    api_ = std::make_unique<Api>(*engine_, tokens_, metrics_, options_, kKey);
    RoomConfig c;
    c.capacity = 1;
    ASSERT_TRUE(engine_->put_room("r", c).is_ok());
  }

  // The answer to a request, waiting for a later one (the in-memory engine answers at once).
  ApiResponse call(std::string_view method, std::string_view target, std::string_view body = {},
                   std::string_view authorization = {}, bool operator_listener = false,
                   bool reserve_only = false) const {
    ApiRequest req;
    req.method = method;
    req.target = target;
    req.body = body;
    req.authorization = authorization;
    req.operator_listener = operator_listener;
    req.reserve_only = reserve_only;
    ApiResponse r = api_->handle(req);
    if (!r.later) return r;
    std::optional<ApiResponse> done;
    r.later([&done](ApiResponse d) { done = std::move(d); });
    EXPECT_TRUE(done.has_value()) << method << " " << target << " never answered";
    ApiResponse out = done ? std::move(*done) : ApiResponse{};
    out.route = r.route;
    return out;
  }

  // A row's pattern with its parameters filled in: the room "r" and a real ticket.
  std::string path_of(const RouteRow& row) {
    if (ticket_.empty()) {
      ApiResponse j = call("POST", "/v1/rooms/r/tickets", "{}");
      EXPECT_EQ(j.status, 201u) << j.body;
      ticket_ = ticket_of(j.body);
    }
    std::string p(row.pattern);
    if (size_t i = p.find("{room}"); i != std::string::npos) p.replace(i, 6, "r");
    if (size_t i = p.find("{ticket}"); i != std::string::npos) p.replace(i, 8, ticket_);
    if (size_t i = p.find("{id}"); i != std::string::npos) p.replace(i, 4, "0123");
    if (size_t i = p.find("{path}"); i != std::string::npos) p.replace(i, 6, "shop/cart");
    return p;
  }

  static const char* first_method(uint8_t methods) {
    if (methods & kGet) return "GET";
    if (methods & kPost) return "POST";
    if (methods & kPut) return "PUT";
    return "DELETE";
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::unique_ptr<Engine> engine_;
  TokenSigner tokens_{"direct-token-secret-0123456789abcdefghij"};
  Metrics metrics_;
  Options options_;
  std::unique_ptr<Api> api_;
  std::string ticket_;
};

TEST(RouteTable, EveryRouteHasARowAndNoTwoRowsTakeTheSameRequest) {
  std::set<Route> routed;
  std::set<std::string> taken;
  for (const RouteRow& row : route_table()) {
    routed.insert(row.route);
    EXPECT_STREQ(route_name(row.route), row.name) << row.pattern;
    for (uint8_t bit = 1; bit <= kDelete; bit <<= 1) {
      if ((row.methods & bit) == 0) continue;
      EXPECT_TRUE(taken.insert(std::to_string(bit) + std::string(row.pattern)).second)
          << "two rows take " << allow_header(bit) << " " << row.pattern;
    }
  }
  for (size_t r = 0; r < static_cast<size_t>(Route::kNotFound); ++r) {
    EXPECT_TRUE(routed.contains(static_cast<Route>(r))) << route_name(static_cast<Route>(r));
  }
}

TEST(RouteTable, PatternsNameOnlyTheRoomTheTicketAnIdOrTheRestOfThePath) {
  for (const RouteRow& row : route_table()) {
    std::string_view p = row.pattern;
    EXPECT_TRUE(p.starts_with('/')) << p;
    for (size_t open = p.find('{'); open != std::string_view::npos; open = p.find('{', open + 1)) {
      const size_t close = p.find('}', open);
      ASSERT_NE(close, std::string_view::npos) << p;
      const std::string_view name = p.substr(open + 1, close - open - 1);
      EXPECT_TRUE(name == "room" || name == "ticket" || name == "id" ||
                  (name == "path" && close == p.size() - 1))
          << p;
    }
  }
}

TEST(RouteTable, PatternsTakeWholeSegments) {
  std::string_view room, ticket;
  EXPECT_TRUE(
      match_pattern("/v1/rooms/{room}/tickets/{ticket}", "/v1/rooms/a/tickets/b", &room, &ticket));
  EXPECT_EQ(room, "a");
  EXPECT_EQ(ticket, "b");
  EXPECT_FALSE(match_pattern("/v1/rooms/{room}", "/v1/rooms/a/tickets", &room, &ticket));
  EXPECT_FALSE(match_pattern("/v1/rooms/{room}/tickets", "/v1/rooms/a/ticketsx", &room, &ticket));
  EXPECT_FALSE(match_pattern("/v1/rooms", "/v1/rooms/", &room, &ticket));
  EXPECT_TRUE(match_pattern("/v1/authz/{path}", "/v1/authz/shop/a/b", &room, &ticket));
  EXPECT_EQ(ticket, "shop/a/b");
  EXPECT_TRUE(match_pattern("/v1/authz/{path}", "/v1/authz/", &room, &ticket));
  EXPECT_EQ(ticket, "");
  EXPECT_FALSE(match_pattern("/v1/authz/{path}", "/v1/authz", &room, &ticket));
  EXPECT_TRUE(match_pattern("/v1/rooms/{room}", "/v1/rooms/", &room, &ticket));
  EXPECT_EQ(room, "");
  EXPECT_EQ(allow_header(kGet | kHead | kDelete), "GET, HEAD, DELETE");
}

TEST_F(ApiDirect, EveryRowReachesItsHandlerWithItsKey) {
  for (const RouteRow& row : route_table()) {
    const std::string path = path_of(row);
    const char* m = first_method(row.methods);
    ApiResponse r = call(m, path, "{}", kBearer, row.audience != Audience::kVisitor);
    EXPECT_EQ(r.route, row.route) << m << " " << path;
    EXPECT_FALSE(no_route(r)) << m << " " << path << ": " << r.body;
    EXPECT_NE(r.status, 405u) << m << " " << path;
    if (row.auth == Auth::kNone) continue;  // the gate's 401 is its own: no cookie
    EXPECT_NE(r.status, 401u) << m << " " << path;
    if (row.auth != Auth::kScrape) {
      ApiResponse no = call(m, path, "{}");
      EXPECT_EQ(no.status, 401u) << m << " " << path << " without a key";
      EXPECT_EQ(no.route, row.route);
    }
  }
}

TEST_F(ApiDirect, AWrongMethodIsRefusedWithWhatThePathTakes) {
  ApiResponse r = call("POST", "/v1/rooms/r/page", "{}", kBearer);
  EXPECT_EQ(r.status, 405u);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].second, "GET, HEAD, PUT, DELETE");
  EXPECT_EQ(r.route, Route::kPage);
  EXPECT_EQ(call("PATCH", "/v1/rooms/r", "{}", kBearer).status, 405u);
  EXPECT_EQ(call("GET", "/v1/nothing").status, 404u);
}

TEST_F(ApiDirect, ABadRoomNameIsRefusedUnderItsRoute) {
  ApiResponse r = call("GET", "/wait/bad!name");
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.route, Route::kWaitPage);
  EXPECT_NE(r.body.find("invalid_room_name"), std::string::npos);
  // The gate answers a proxy's subrequest: 401, never 400, which nginx would make a 500.
  ApiResponse gate = call("GET", "/v1/gate/bad!name");
  EXPECT_EQ(gate.status, 401u);
  EXPECT_NE(gate.body.find("no_admission"), std::string::npos);
  EXPECT_EQ(call("GET", "/v1/gate/").status, 401u);
  // The key first: an anonymous caller learns nothing of the name.
  EXPECT_EQ(call("PUT", "/v1/rooms/bad!name", "{}").status, 401u);
}

TEST_F(ApiDirect, TheReserveServesItsRowsAndTheAdminKeyOnly) {
  EXPECT_EQ(call("GET", "/healthz", {}, {}, false, true).status, 200u);
  EXPECT_EQ(call("GET", "/v1/gate/r", {}, {}, false, true).route, Route::kGate);
  EXPECT_NE(call("GET", "/v1/gate/r", {}, {}, false, true).status, 503u);
  ApiResponse join = call("POST", "/v1/rooms/r/tickets", "{}", {}, false, true);
  EXPECT_EQ(join.status, 503u);
  EXPECT_NE(join.body.find("overloaded"), std::string::npos);
  EXPECT_EQ(call("GET", "/v1/rooms/r", {}, kBearer, false, true).status, 200u);
}

TEST_F(ApiDirect, WithAnAdminListenerEachRowIsAnsweredOnItsOwn) {
  options_.admin_listen = "127.0.0.1:0";
  make_api();
  for (const RouteRow& row : route_table()) {
    const std::string path = path_of(row);
    const char* m = first_method(row.methods);
    EXPECT_EQ(no_route(call(m, path, "{}", kBearer, false)), row.audience == Audience::kOperator)
        << m << " " << path << " on the public listener";
    EXPECT_EQ(no_route(call(m, path, "{}", kBearer, true)), row.audience == Audience::kVisitor)
        << m << " " << path << " on the operator listener";
  }
}

TEST_F(ApiDirect, AJoinAndItsStatusWithoutASocket) {
  ApiResponse j = call("POST", "/v1/rooms/r/tickets", "{}");
  ASSERT_EQ(j.status, 201u) << j.body;
  EXPECT_EQ(j.route, Route::kJoin);
  const std::string id = ticket_of(j.body);
  ApiResponse s = call("GET", "/v1/rooms/r/tickets/" + id);
  EXPECT_EQ(s.status, 200u);
  EXPECT_EQ(s.route, Route::kStatus);
  EXPECT_NE(s.body.find(R"("status":"ALLOWED")"), std::string::npos) << s.body;
  EXPECT_EQ(call("DELETE", "/v1/rooms/r/tickets/" + id).status, 204u);
  EXPECT_EQ(call("GET", "/v1/rooms/r/tickets/" + id).route, Route::kStatus);
}

}  // namespace
}  // namespace anteroom
