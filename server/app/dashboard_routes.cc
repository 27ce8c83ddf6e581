// Api: the operator's dashboard (docs/dashboard.md): its page, the one
// stream each open dashboard reads, and a room's last 15 minutes.
#include "server/app/api.h"
#include "server/app/dashboard_feed.h"
#include "server/app/dashboard_page.h"

namespace anteroom {
namespace {

ApiResponse with_route(ApiResponse r, Route route) {
  r.route = route;
  return r;
}

}  // namespace

std::optional<ApiResponse> Api::dashboard_route(const ApiRequest& req,
                                                const std::vector<std::string_view>& parts) const {
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (parts.size() == 1 && parts[0] == "admin") {
    // The page holds no data: it asks for the key and sends it with every call it makes.
    if (!get) return method_not_allowed("GET", Route::kDashboard);
    return with_route(dashboard_page(req.accept_language), Route::kDashboard);
  }
  const bool stream =
      parts.size() == 3 && parts[0] == "v1" && parts[1] == "admin" && parts[2] == "stream";
  const bool history = parts.size() == 5 && parts[0] == "v1" && parts[1] == "admin" &&
                       parts[2] == "rooms" && parts[4] == "history";
  if (!stream && !history) return std::nullopt;
  const Route route = stream ? Route::kDashboardStream : Route::kRoomHistory;
  if (req.method != "GET") return method_not_allowed("GET", route);
  if (!authorized(req.authorization)) return with_route(unauthorized(), route);
  if (dashboard_ == nullptr) {
    return with_route(error_response(503, "not_ready", "the dashboard feed is not running"), route);
  }
  if (stream) {
    ApiResponse r;
    r.route = route;
    r.upgrade = ApiResponse::Upgrade::kDashboard;
    return r;
  }
  if (!valid_room_name(parts[3])) {
    return with_route(error_response(400, "invalid_room_name",
                                     "room names are 1-64 characters of A-Z a-z 0-9 _ -"),
                      route);
  }
  if (!engine_.room_info(parts[3]).is_ok()) {
    return with_route(engine_error(engine_.room_info(parts[3]).status()), route);
  }
  ApiResponse r;
  r.route = route;
  // A room made within the last second has no sample yet: an empty history.
  r.body = dashboard_->history_json(parts[3]).value_or(
      R"({"room":")" + std::string(parts[3]) +
      R"(","unix_ms":[],"waiting":[],"active":[],"joins_per_second":[],"admissions_per_second":[],"expiries_per_second":{"allowed_unused":[],"session_idle":[],"abandoned":[]}})");
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace anteroom
