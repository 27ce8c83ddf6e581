#include "server/app/declared_rooms.h"

#include <boost/json/parse.hpp>

#include "server/app/api.h"
#include "server/app/room_json.h"

namespace anteroom {
namespace json = boost::json;

Status read_room_settings(const json::object& settings, RoomConfig* c) {
  ApiResponse err;
  if (read_room_fields(settings, c, &err)) return Status::ok();
  // The 400 answer's message: {"error":{"code":...,"message":...}}.
  boost::system::error_code ec;
  const json::value body = json::parse(err.body, ec);
  const json::value* message = ec ? nullptr : body.find_pointer("/error/message", ec);
  return Status(Code::kInvalidArgument, message != nullptr && message->is_string()
                                            ? std::string(message->as_string())
                                            : std::string("a setting is not valid"));
}

Status put_declared_room(Engine& engine, const RoomConfig& defaults, const DeclaredRoom& room) {
  const auto existing = engine.room_info(room.name);
  RoomConfig c = existing.is_ok() ? existing->config : defaults;
  boost::system::error_code ec;
  const json::value settings = json::parse(room.settings, ec);
  if (ec || !settings.is_object()) {
    return Status(Code::kInvalidArgument, room.where + "room " + room.name + ": bad settings");
  }
  Status st = read_room_settings(settings.as_object(), &c);
  if (st.is_ok()) st = c.validate();
  if (st.is_ok() && existing.is_ok()) {
    if (c == existing->config) return Status::ok();  // already as the file says
    c.parts = RoomConfig::kSettings;  // as PUT: an event or a page put meanwhile stays
  }
  if (st.is_ok()) st = engine.put_room(room.name, c);
  if (st.is_ok()) return st;
  return Status(st.code(), room.where + "room " + room.name + ": " + st.message());
}

}  // namespace anteroom
