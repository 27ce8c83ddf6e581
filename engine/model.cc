#include "engine/model.h"

namespace anteroom {

const char* state_name(TicketState s) {
  switch (s) {
    case TicketState::kWaiting:
      return "WAITING";
    case TicketState::kAllowed:
      return "ALLOWED";
    case TicketState::kActive:
      return "ACTIVE";
    case TicketState::kLeft:
      return "LEFT";
    case TicketState::kExpired:
      return "EXPIRED";
  }
  return "UNKNOWN";
}

const char* reason_name(EndReason r) {
  switch (r) {
    case EndReason::kNone:
      return "none";
    case EndReason::kAllowedUnused:
      return "allowed_unused";
    case EndReason::kSessionIdle:
      return "session_idle";
    case EndReason::kAbandoned:
      return "abandoned";
    case EndReason::kLeft:
      return "left";
    case EndReason::kCleared:
      return "cleared";
  }
  return "unknown";
}

Status RoomConfig::validate() const {
  constexpr uint32_t kDay = 86'400;
  auto bad = [](const char* field, const char* why) {
    return Status(Code::kInvalidArgument, std::string(field) + " " + why);
  };
  if (admission == AdmissionMode::kManual && admit_per_second != 0) {
    return bad("admit_per_second", "applies to auto admission only; set it to 0");
  }
  if (admit_per_second > 1'000'000) return bad("admit_per_second", "must be <= 1000000");
  if (allowed_ttl_seconds < 1 || allowed_ttl_seconds > 7 * kDay) {
    return bad("allowed_ttl_seconds", "must be between 1 and 604800");
  }
  if (session_ttl_seconds < 1 || session_ttl_seconds > 7 * kDay) {
    return bad("session_ttl_seconds", "must be between 1 and 604800");
  }
  if (heartbeat_timeout_seconds < 1 || heartbeat_timeout_seconds > kDay) {
    return bad("heartbeat_timeout_seconds", "must be between 1 and 86400");
  }
  return Status::ok();
}

bool valid_room_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool valid_user(std::string_view user) {
  if (user.empty() || user.size() > 128) return false;
  for (unsigned char c : user) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace anteroom
