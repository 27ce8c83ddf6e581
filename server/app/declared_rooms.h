// Rooms declared in the --config file: their settings read the way PUT /v1/rooms/{room}
// reads them (read_room_fields), and put at start the way that PUT puts them.
#pragma once

#include <boost/json/object.hpp>

#include "engine/engine.h"
#include "server/app/options.h"

namespace anteroom {

// Applies the fields of a PUT body to *c (read_room_fields) without the checks across
// fields; kInvalidArgument with PUT's message for an unknown field or a bad value.
Status read_room_settings(const boost::json::object& settings, RoomConfig* c);

// Creates the room with `defaults` and its settings, or, if it exists, sets its settings
// (only those the file names; the rest, its event and its page stay as they are), as a PUT
// would. Errors start with the room's "FILE:LINE: ".
Status put_declared_room(Engine& engine, const RoomConfig& defaults, const DeclaredRoom& room);

}  // namespace anteroom
