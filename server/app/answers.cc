// The shapes of the Api's answers (api.h): errors, an engine's error as HTTP, 405, and an
// answer that comes later than the request.
#include <algorithm>
#include <boost/json.hpp>
#include <mutex>
#include <optional>

#include "server/app/api.h"

namespace anteroom {
namespace json = boost::json;

ApiResponse answer_when(const std::function<void(Respond)>& start) {
  struct Pending {
    std::mutex mu;
    std::optional<ApiResponse> ready;  // came before anyone asked for it
    Respond sink;                      // asked for before it came
  };
  auto p = std::make_shared<Pending>();
  start([p](ApiResponse r) {
    Respond sink;
    {
      std::lock_guard lock(p->mu);
      if (!p->sink) {
        p->ready = std::move(r);
        return;
      }
      sink = std::move(p->sink);
    }
    sink(std::move(r));
  });
  {
    std::lock_guard lock(p->mu);
    if (p->ready) return std::move(*p->ready);  // answered at once: the common case
  }
  ApiResponse deferred;
  deferred.later = [p](Respond sink) {
    std::optional<ApiResponse> ready;
    {
      std::lock_guard lock(p->mu);
      if (p->ready) {
        ready = std::move(p->ready);
      } else {
        p->sink = std::move(sink);
        return;
      }
    }
    sink(std::move(*ready));
  };
  return deferred;
}

ApiResponse error_response(unsigned status, std::string_view code, std::string_view message) {
  ApiResponse r;
  r.status = status;
  json::object err;
  err["code"] = code;
  err["message"] = message;
  json::object body;
  body["error"] = std::move(err);
  r.body = json::serialize(body);
  if (status == 503) r.headers.emplace_back("Retry-After", "5");
  return r;
}

ApiResponse method_not_allowed(std::string_view allow, Route r) {
  ApiResponse res =
      error_response(405, "method_not_allowed", "this path takes only " + std::string(allow));
  res.headers.emplace_back("Allow", std::string(allow));
  res.route = r;
  return res;
}

ApiResponse engine_error(const Status& st) {
  unsigned status = 400;
  switch (st.code()) {
    case Code::kRoomNotFound:
    case Code::kTicketNotFound:
      status = 404;
      break;
    case Code::kRoomFull:
    case Code::kUnavailable:
    case Code::kStorageFailed:
    case Code::kRoomClosed:
      status = 503;
      break;
    case Code::kWrongState:
      status = 409;
      break;
    default:
      status = 400;
  }
  ApiResponse r = error_response(status, code_name(st.code()), st.message());
  // Unavailable (a cluster node cut off from Redis reconnects every half second) passes
  // soon: a second, not the five every other 503 says.
  if (st.code() == Code::kUnavailable) {
    std::erase_if(r.headers, [](const auto& h) { return h.first == "Retry-After"; });
    r.headers.emplace_back("Retry-After", "1");
  }
  return r;
}

}  // namespace anteroom
