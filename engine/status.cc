#include "engine/status.h"

namespace anteroom {

const char* code_name(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid_argument";
    case Code::kRoomNotFound:
      return "room_not_found";
    case Code::kTicketNotFound:
      return "ticket_not_found";
    case Code::kRoomFull:
      return "room_full";
    case Code::kWrongState:
      return "wrong_state";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kStorageFailed:
      return "storage_failed";
    case Code::kRoomClosed:
      return "room_closed";
  }
  return "unknown";
}

}  // namespace anteroom
