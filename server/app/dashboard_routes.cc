// Api: the operator's dashboard (docs/dashboard.md): the one stream each open dashboard
// reads, and a room's last 15 minutes (its page is dashboard_page.cc's).
#include "server/app/api.h"
#include "server/app/dashboard_feed.h"

namespace anteroom {
namespace {

ApiResponse no_feed() {
  return error_response(503, "not_ready", "the dashboard feed is not running");
}

}  // namespace

ApiResponse Api::dashboard_stream_route() const {
  if (dashboard_ == nullptr) return no_feed();
  ApiResponse r;
  r.upgrade = ApiResponse::Upgrade::kDashboard;
  return r;
}

ApiResponse Api::room_history_route(std::string_view room) const {
  if (dashboard_ == nullptr) return no_feed();
  if (auto info = engine_.room_info(room); !info.is_ok()) return engine_error(info.status());
  ApiResponse r;
  // A room made within the last second has no sample yet: an empty history.
  r.body = dashboard_->history_json(room).value_or(
      R"({"room":")" + std::string(room) +
      R"(","unix_ms":[],"waiting":[],"active":[],"joins_per_second":[],"admissions_per_second":[],"expiries_per_second":{"allowed_unused":[],"session_idle":[],"abandoned":[]}})");
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace anteroom
