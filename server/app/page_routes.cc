// Api: a room's waiting-page branding, PUT (operator), GET (anyone: it is what visitors see
// anyway), DELETE (operator) /v1/rooms/{room}/page. docs/branding.md. A PUT replaces the
// whole branding and only the branding (RoomConfig::kPage): a PUT of the room's settings or
// its event at the same moment stays.
#include "server/app/api.h"
#include "server/app/page_branding.h"

namespace anteroom {

ApiResponse Api::page_route(const ApiRequest& req, std::string_view room) const {
  auto info = engine_.room_info(room);
  if (!info.is_ok()) return engine_error(info.status());
  if (req.method == "GET" || req.method == "HEAD") {
    if (info->config.page.empty())
      return error_response(404, "no_page", "the room has no branding");
    ApiResponse res;
    res.body = info->config.page;
    return res;
  }
  // PUT and DELETE: the operator's (the route table has checked the key).
  RoomConfig c = info->config;
  c.parts = RoomConfig::kPage;  // a PUT of the room or its event at the same moment stays
  unsigned ok_status = 204;
  if (req.method == "DELETE") {
    if (c.page.empty()) return error_response(404, "no_page", "the room has no branding");
    c.page.clear();
  } else {
    Branding b;
    ApiResponse err;
    if (!read_branding(req.body, &b, &err)) return err;
    ok_status = c.page.empty() ? 201 : 200;
    c.page = b.to_json();
  }
  return answer_when([&](const Respond& respond) {
    engine_.put_room_async(room, c, [page = c.page, ok_status, respond](const Status& st) {
      if (!st.is_ok()) return respond(engine_error(st));
      ApiResponse res;
      res.status = ok_status;
      if (ok_status != 204) res.body = page.empty() ? "{}" : page;
      respond(std::move(res));
    });
  });
}

}  // namespace anteroom
