// A room as JSON (GET /v1/rooms/{room}) and a PUT body read into its configuration.
#pragma once

#include <boost/json/object.hpp>

#include "engine/model.h"
#include "server/app/api.h"

namespace anteroom {

boost::json::object room_json(const RoomInfo& r);
// A room's scheduled event as GET /v1/rooms/{room}/event answers it (event_routes.cc).
boost::json::object event_json(std::string_view room, const RoomEvent& e);
// Applies the fields of a PUT body to *c; false (with *err the 400 answer naming the field)
// on an unknown field or a value of the wrong type or range, leaving *c part-changed: the
// caller keeps its own copy.
bool read_room_fields(const boost::json::object& o, RoomConfig* c, ApiResponse* err);
// An unsigned integer field, at most `max`; absent leaves *out alone.
bool read_count(const boost::json::object& o, const char* key, uint64_t max, uint64_t* out,
                ApiResponse* err);

}  // namespace anteroom
