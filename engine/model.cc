#include "engine/model.h"

#include <algorithm>

#include "engine/lane_schedule.h"

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

const char* mode_name(RoomMode m) {
  switch (m) {
    case RoomMode::kFifo:
      return "fifo";
    case RoomMode::kRandom:
      return "random";
    case RoomMode::kPassthrough:
      return "passthrough";
    case RoomMode::kReject:
      return "reject";
    case RoomMode::kQueueAll:
      return "queue_all";
  }
  return "unknown";
}

bool parse_mode(std::string_view name, RoomMode* out) {
  for (RoomMode m : {RoomMode::kFifo, RoomMode::kRandom, RoomMode::kPassthrough, RoomMode::kReject,
                     RoomMode::kQueueAll}) {
    if (name == mode_name(m)) {
      *out = m;
      return true;
    }
  }
  return false;
}

Status RoomEvent::validate() const {
  auto bad = [](const char* field, const char* why) {
    return Status(Code::kInvalidArgument, std::string(field) + " " + why);
  };
  if (!exists()) return Status::ok();
  if (prequeue_at_ms <= 0) return bad("prequeue_at", "must be a time after 1970");
  if (start_at_ms < prequeue_at_ms) return bad("start_at", "must not be before prequeue_at");
  if (end_at_ms != 0 && end_at_ms <= start_at_ms) return bad("end_at", "must be after start_at");
  if (admit_per_second && *admit_per_second > 1'000'000) {
    return bad("admit_per_second", "must be <= 1000000");
  }
  if (phase > Phase::kEnded) return bad("phase", "is not a phase");
  if (phase >= Phase::kStarted && start_seq < prequeue_seq) {
    return bad("start_seq", "must not be before prequeue_seq");
  }
  return Status::ok();
}

RoomConfig RoomConfig::with_parts_of(const RoomConfig& put) const {
  RoomConfig out = *this;
  if ((put.parts & kSettings) != 0) {
    out.capacity = put.capacity;
    out.admission = put.admission;
    out.admit_per_second = put.admit_per_second;
    out.allowed_ttl_seconds = put.allowed_ttl_seconds;
    out.session_ttl_seconds = put.session_ttl_seconds;
    out.heartbeat_timeout_seconds = put.heartbeat_timeout_seconds;
    out.max_waiting = put.max_waiting;
    out.trust_user = put.trust_user;
    out.ip_joins_per_minute = put.ip_joins_per_minute;
    out.pow_difficulty = put.pow_difficulty;
    out.mode = put.mode;
    out.lanes = put.lanes;
    out.gate = put.gate;
  }
  if ((put.parts & kEvent) != 0) out.event = put.event;
  if ((put.parts & kPage) != 0) out.page = put.page;
  if ((put.parts & kPasses) != 0) {
    for (const Pass& p : put.passes) {
      auto it = std::find_if(out.passes.begin(), out.passes.end(),
                             [&](const Pass& q) { return q.id == p.id; });
      if (it == out.passes.end()) {
        out.passes.push_back(p);
      } else {
        const bool revoked = it->revoked || p.revoked;
        *it = p;
        it->revoked = revoked;
      }
    }
    std::erase_if(out.passes,
                  [&](const Pass& p) { return p.expires_at_ms < put.passes_prune_before_ms; });
  }
  out.passes_prune_before_ms = 0;
  out.parts = kAllParts;
  return out;
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
  if (max_waiting > kMaxWaitingCap) {
    return bad("max_waiting", "must be at most 100000000 (0 means that many)");
  }
  if (mode > RoomMode::kQueueAll) return bad("mode", "is not a mode");
  if (ip_joins_per_minute > 1'000'000) return bad("ip_joins_per_minute", "must be <= 1000000");
  if (pow_difficulty > 32 && pow_difficulty != kPowAuto) {
    return bad("pow_difficulty", "must be 0-32 bits or \"auto\"");
  }
  if (page.size() > kMaxPageBytes) return bad("page", "must be at most 524288 bytes");
  if (gate.size() > kMaxGateBytes) return bad("gate", "must be at most 65536 bytes");
  if (lanes.size() == 1 || lanes.size() > LaneSchedule::kMaxLanes) {
    return bad("lanes", "must be none, or 2 to 8 lanes");
  }
  for (uint32_t w : lanes) {
    if (w < 1 || w > 1000) return bad("lanes", "weights must be 1 to 1000");
  }
  if (!lanes.empty() && mode != RoomMode::kFifo) {
    return bad("lanes", "need mode fifo (random, passthrough, reject and queue_all have no turns)");
  }
  if (!lanes.empty() && event.exists() && event.shuffle) {
    return bad("lanes", "cannot go with an event that shuffles its pre-queue");
  }
  if (!lanes.empty() && event.mode && *event.mode != RoomMode::kFifo) {
    return bad("lanes", "need the event's mode to be fifo too");
  }
  if (passes.size() > kMaxPasses) return bad("passes", "must be at most 1000");
  for (const Pass& p : passes) {
    if (p.id.size() != 32 || p.label.size() > 128) return bad("passes", "are malformed");
  }
  if (parts == 0 || parts > kAllParts) return bad("parts", "must name what the put sets");
  return event.validate();
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

namespace {

// The next code point of well-formed UTF-8 at s[*i] (advancing *i), or -1 if malformed:
// no overlong forms, no surrogates, nothing past U+10FFFF.
int32_t next_code_point(std::string_view s, size_t* i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(*i);
  if (b0 < 0x80) return s[(*i)++];
  // The sequence's length, the lead byte's payload, and the smallest code point that needs
  // that length (anything smaller is an overlong form).
  struct Form {
    uint8_t mask, lead;
    size_t extra;
    int32_t min;
  };
  static constexpr Form kForms[] = {
      {0xE0, 0xC0, 1, 0x80}, {0xF0, 0xE0, 2, 0x800}, {0xF8, 0xF0, 3, 0x10000}};
  for (const Form& f : kForms) {
    if ((b0 & f.mask) != f.lead) continue;
    if (*i + f.extra >= s.size()) return -1;
    int32_t cp = b0 & static_cast<uint8_t>(~f.mask);
    for (size_t k = 1; k <= f.extra; ++k) {
      const uint8_t b = byte(*i + k);
      if ((b & 0xC0) != 0x80) return -1;
      cp = (cp << 6) | (b & 0x3F);
    }
    *i += f.extra + 1;
    if (cp < f.min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    return cp;
  }
  return -1;
}

// Characters a name may not hold: they are invisible, reorder text, or break lines (the
// controls, and Unicode's default-ignorable and bidirectional formatting characters).
bool unprintable(int32_t cp) {
  struct Range {
    int32_t first, last;
  };
  static constexpr Range kRanges[] = {
      {0x0000, 0x001F},   {0x007F, 0x009F},    // C0, DEL, C1 controls
      {0x00AD, 0x00AD},                        // soft hyphen
      {0x034F, 0x034F},                        // combining grapheme joiner
      {0x061C, 0x061C},                        // Arabic letter mark (bidi)
      {0x115F, 0x1160},   {0x3164, 0x3164},    // Hangul fillers
      {0xFFA0, 0xFFA0},                        // halfwidth Hangul filler
      {0x17B4, 0x17B5},   {0x180B, 0x180F},    // Khmer vowels, Mongolian selectors
      {0x200B, 0x200F},                        // zero-width, LRM, RLM
      {0x2028, 0x202E},                        // separators, bidi embeddings
      {0x2060, 0x206F},                        // word joiner, invisible operators, isolates
      {0xFE00, 0xFE0F},                        // variation selectors
      {0xFEFF, 0xFEFF},                        // byte-order mark
      {0xFFF0, 0xFFFB},                        // specials, interlinear annotations
      {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},  // shorthand and musical format controls
      {0xE0000, 0xE0FFF},                      // tags, variation selectors supplement
      {0xFDD0, 0xFDEF},                        // noncharacters
  };
  if ((cp & 0xFFFE) == 0xFFFE) return true;  // noncharacters U+xxFFFE, U+xxFFFF
  for (const Range& r : kRanges) {
    if (cp >= r.first && cp <= r.last) return true;
  }
  return false;
}

}  // namespace

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (next_code_point(s, &i) < 0) return false;
  }
  return true;
}

bool valid_user(std::string_view user) {
  if (user.empty() || user.size() > 128) return false;
  for (size_t i = 0; i < user.size();) {
    const int32_t cp = next_code_point(user, &i);
    if (cp < 0 || unprintable(cp)) return false;
  }
  return true;
}

}  // namespace anteroom
