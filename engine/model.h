// The waiting-room model as plain values: states, room configuration, what a ticket looks
// like from outside, and the push hints the engine emits (docs/engine.md explains the rules).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"

namespace anteroom {

enum class TicketState : uint8_t {
  kWaiting = 1,
  kAllowed = 2,  // admitted, not yet used at the protected service
  kActive = 3,   // used at the protected service (verify / gate)
  kLeft = 4,
  kExpired = 5,
};
const char* state_name(TicketState s);  // "WAITING", "ALLOWED", ...
inline bool is_live(TicketState s) { return s <= TicketState::kActive; }
inline bool holds_slot(TicketState s) {
  return s == TicketState::kAllowed || s == TicketState::kActive;
}

// Why a ticket reached EXPIRED or LEFT.
enum class EndReason : uint8_t {
  kNone = 0,
  kAllowedUnused = 1,  // ALLOWED and not used within allowed_ttl_seconds
  kSessionIdle = 2,    // ACTIVE and idle for session_ttl_seconds
  kAbandoned = 3,      // WAITING and not seen for heartbeat_timeout_seconds
  kLeft = 4,           // the visitor left
  kCleared = 5,        // the operator cleared the line
};
const char* reason_name(EndReason r);  // "allowed_unused", "session_idle", ...

enum class AdmissionMode : uint8_t { kAuto = 0, kManual = 1 };

// How a room lets people in (docs/policies.md).
enum class RoomMode : uint8_t {
  kFifo = 0,         // in join order (section 2)
  kRandom = 1,       // each admission picks uniformly among the waiting; no positions
  kPassthrough = 2,  // everyone is admitted at once; capacity and rate ignored
  kReject = 3,       // joins are refused (room_closed); existing tickets keep their state
  kQueueAll = 4,     // joins wait, nobody is admitted (maintenance, pause)
};
const char* mode_name(RoomMode m);  // "fifo", "random", ...
// The mode named `name`; false if there is none.
bool parse_mode(std::string_view name, RoomMode* out);

// A room's scheduled event. Times are Unix milliseconds (wall clock).
struct RoomEvent {
  // Where the event is: set by the room as its times pass (not by the operator).
  enum class Phase : uint8_t { kScheduled = 0, kPrequeue = 1, kStarted = 2, kEnded = 3 };

  int64_t prequeue_at_ms = 0;  // 0: the room has no event
  int64_t start_at_ms = 0;
  int64_t end_at_ms = 0;  // 0: no end
  bool shuffle = false;   // order the pre-queue by the draw at the start
  // Overrides while the event runs (start to end); unset: the room's own.
  std::optional<uint32_t> capacity;
  std::optional<uint32_t> admit_per_second;
  std::optional<RoomMode> mode;
  // The event's identity, drawn at random when it is set; public (it travels in records). The
  // draw's secret seed derives from it under the engine's key (fair_draw.h's event_seed), and
  // is shown only after the start.
  std::array<uint8_t, 32> nonce{};
  // An event from a log written before seeds were derived: its nonce is the seed itself.
  bool legacy_seed = false;
  // SHA-256 of the seed: the commitment shown from the moment the event is set. Filled in by
  // the room when it takes the configuration (every node computes it; never stored).
  std::array<uint8_t, 32> seed_sha256{};

  Phase phase = Phase::kScheduled;
  uint64_t prequeue_seq = 0;  // the first seq of the pre-queue (from kPrequeue on)
  uint64_t start_seq = 0;     // the first seq after it (from kStarted on)

  bool exists() const { return start_at_ms != 0; }
  // kInvalidArgument naming the field if the times or overrides are inconsistent.
  Status validate() const;
  bool operator==(const RoomEvent&) const = default;
};

// SHA-256 of a secret key the visitor's client keeps (a bound admission).
using KeyHash = std::array<uint8_t, 32>;

struct RoomConfig {
  // A room never holds more WAITING tickets than this, whatever max_waiting says.
  static constexpr uint64_t kMaxWaitingCap = 100'000'000;

  uint32_t capacity = 10;  // max ALLOWED + ACTIVE at once; 0 = no limit
  AdmissionMode admission = AdmissionMode::kAuto;
  uint32_t admit_per_second = 0;            // auto mode only; 0 = no cap
  uint32_t allowed_ttl_seconds = 300;       // ALLOWED must be used within this
  uint32_t session_ttl_seconds = 900;       // ACTIVE expires after this long idle
  uint32_t heartbeat_timeout_seconds = 60;  // WAITING is abandoned after this long unseen
  uint64_t max_waiting = 1'000'000;         // joins beyond this are refused; 0 = kMaxWaitingCap
  // A join naming a user who holds a live ticket gets that ticket without proof (names are
  // authenticated upstream). Off: only the same visitor gets it back (the server checks).
  bool trust_user = false;
  // Joins from one client address per minute; 0 = no limit. The server
  // counts (it knows addresses); in a cluster each node counts the joins it takes.
  uint32_t ip_joins_per_minute = 0;
  // Proof of work before a join: leading zero bits, 0 = off, 1-32, or
  // kPowAuto (the server sets it from the join rate). The server checks it.
  static constexpr uint8_t kPowAuto = 255;
  uint8_t pow_difficulty = 0;
  RoomMode mode = RoomMode::kFifo;
  RoomEvent event;  // none unless event.exists()
  // The waiting page's branding as the operator put it (JSON the server checked and wrote;
  // the engine only keeps it). Empty: anteroom's own page.
  static constexpr size_t kMaxPageBytes = size_t{512} * 1024;
  std::string page;
  // Lanes (docs/policies.md, "Lanes"): the weight of each, 1-1000, at most
  // LaneSchedule::kMaxLanes (lane_schedule.h); empty: one line. A join names its lane
  // (JoinRequest::lane); admissions take the lanes' turns in proportion to their weights,
  // in join order inside each lane. Only in mode fifo, and not with an event that shuffles.
  std::vector<uint32_t> lanes;
  // What the server keeps for the room's gate (match, bypass, the gate's answers, who may
  // join: docs/api.md), as JSON the server checked and wrote; the engine only keeps it. Part
  // of the settings.
  static constexpr size_t kMaxGateBytes = size_t{64} * 1024;
  std::string gate;
  // Passes (signed links that let staff through the gate, docs/api.md): what the room knows
  // of each. A put of kPasses adds the passes it names to the room's (a pass revoked on
  // either side stays revoked) and drops those expired before its passes_prune_before_ms,
  // so puts from two nodes at once lose nothing.
  struct Pass {
    std::string id;             // 16 random bytes as hex
    std::string label;          // the operator's, at most 128 bytes
    int64_t expires_at_ms = 0;  // Unix ms
    uint32_t uses = 0;          // redemptions allowed; 0: any number
    bool revoked = false;
    bool operator==(const Pass&) const = default;
  };
  static constexpr size_t kMaxPasses = 1000;
  std::vector<Pass> passes;
  int64_t passes_prune_before_ms = 0;  // a put's only: never kept
  // Which parts a put sets; the rest stay as the room has them, merged where the put is
  // applied (under the room's owner lock; on every cluster node in record order), so an
  // operator's PUT of the room, of its event and of its page never undo one another. A
  // configuration read back always has every part.
  enum Part : uint8_t { kSettings = 1, kEvent = 2, kPage = 4, kPasses = 8, kAllParts = 15 };
  uint8_t parts = kAllParts;
  // This configuration with `put`'s parts put in.
  RoomConfig with_parts_of(const RoomConfig& put) const;

  // kInvalidArgument naming the field if a value is out of range.
  Status validate() const;
  // The longest line allowed: max_waiting, or the cap for 0.
  uint64_t waiting_limit() const { return max_waiting == 0 ? kMaxWaitingCap : max_waiting; }
  bool operator==(const RoomConfig&) const = default;
};

// Room names: 1-64 of [A-Za-z0-9_-].
bool valid_room_name(std::string_view name);
// Users: 1-128 bytes of well-formed UTF-8 with nothing unprintable: no control characters
// (C0, DEL, C1), no bidirectional or zero-width formatting characters, no separators or
// byte-order marks, no noncharacters.
bool valid_user(std::string_view user);
// Well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool valid_utf8(std::string_view s);
// What valid_user checks, said for an error message.
constexpr const char* kUserRule =
    "user must be 1-128 bytes of printable UTF-8 (no control, bidi or zero-width characters)";

// A join: the user it is for (empty: anonymous) and, for a bound admission, the hash of the
// client's key.
struct JoinRequest {
  std::string_view user;
  std::optional<KeyHash> key_hash;
  // The lane of a room with lanes (RoomConfig::lanes): its index, or kLastLane (the default,
  // also for an index past the room's last lane). Ignored without lanes.
  static constexpr uint8_t kLastLane = 15;
  uint8_t lane = kLastLane;
  // Seconds an admission of this ticket holds its slot unused (ALLOWED), if shorter than the
  // room's allowed_ttl_seconds: the gate's own admissions (gate_probation_seconds). 0: the
  // room's. At most kMaxProbation.
  static constexpr uint16_t kMaxProbation = 4095;
  uint16_t probation_s = 0;
};

// An opaque ticket id: 27 URL-safe characters (20 bytes, of which 96 bits are random).
using TicketId = std::array<char, 27>;
inline std::string_view id_view(const TicketId& id) { return {id.data(), id.size()}; }

// What the server checks before a join reaches the room (Engine::join_rules).
struct JoinRules {
  uint32_t ip_joins_per_minute = 0;
  uint8_t pow_difficulty = 0;  // RoomConfig::pow_difficulty
  bool trust_user = false;     // RoomConfig::trust_user
  // A join now would be admitted at once: an auto room (or passthrough) with a free slot,
  // nobody waiting, no pre-queue. As of the read: a join racing others may still wait.
  bool free_slot = false;
  uint32_t session_ttl_seconds = 900;  // RoomConfig::session_ttl_seconds
};

// A drawn pre-queue: the seed that drew it, the seqs it covered, its refs (fair_draw.h) in
// drawn order. Kept with the room after its event ends or is deleted (the places it gave
// stand); GET .../event/draw shows it only while it is the room's event's own.
struct DrawInfo {
  std::array<uint8_t, 32> seed{};
  uint64_t first_seq = 0;  // the pre-queue: seqs [first_seq, end_seq)
  uint64_t end_seq = 0;
  std::vector<uint64_t> refs;
  bool operator==(const DrawInfo&) const = default;
};

// A ticket as seen from outside at one moment.
struct TicketView {
  TicketId id{};
  uint64_t seq = 0;  // its place in the room's join order (0, 1, 2, ...)
  TicketState state = TicketState::kWaiting;
  EndReason reason = EndReason::kNone;
  uint64_t position = 0;  // 1 + WAITING tickets ahead; 0 once not waiting
  uint64_t waiting = 0;   // the room's WAITING count
  uint64_t active = 0;    // the room's ALLOWED + ACTIVE count
  uint32_t capacity = 0;
  // A wait estimate while WAITING: at least eta_seconds, likely under eta_high_seconds; none
  // until there is enough evidence (docs/policies.md, "The wait estimate"). 0 once admitted.
  std::optional<double> eta_seconds;
  std::optional<double> eta_high_seconds;
  // WAITING with no position to tell: in a pre-queue (until the start) or in a random room.
  bool position_hidden = false;
  int64_t opens_at_ms = 0;          // in a pre-queue: the event's start (Unix ms); else 0
  RoomMode mode = RoomMode::kFifo;  // the room's mode in effect
  int64_t admitted_at_ms = 0;       // clock time of admission; 0 while waiting
  // Clock time the admission stops being valid unless used (ALLOWED: admission plus
  // allowed_ttl_seconds) or refreshed (ACTIVE: last use plus session_ttl_seconds); 0 while
  // waiting or ended.
  int64_t valid_until_ms = 0;
  // In a room with lanes: the ticket's lane (an index into RoomConfig::lanes) and how many
  // the room has; else both 0.
  uint8_t lane = 0;
  uint8_t lanes = 0;
};

struct JoinResult {
  TicketView ticket;
  std::optional<KeyHash> key_hash;  // the ticket's (for a user's existing ticket: its own)
  bool created = false;             // false: the user already held this live ticket
  uint64_t durable_at = 0;          // nonzero: acknowledge only after Engine::when_durable(this)
};

// A ticket with its user, for the protected service (verify) and tokens.
struct TicketDetail {
  TicketView ticket;
  std::string user;                 // empty for anonymous joins
  bool first_use = false;           // activate() turned ALLOWED into ACTIVE just now
  std::optional<KeyHash> key_hash;  // set for a bound admission
};

// One ticket as recovery found it: enough to rebuild it exactly (same id, same place).
struct RestoredTicket {
  uint64_t seq = 0;               // its place in the join order
  std::array<uint32_t, 3> tag{};  // the random part of its id
  std::string user;               // empty for anonymous joins
  std::optional<KeyHash> key_hash;
  TicketState state = TicketState::kWaiting;
  EndReason reason = EndReason::kNone;
  int64_t admitted_at_ms = 0;  // engine clock; ALLOWED/ACTIVE only
  // Engine clock: last seen (WAITING) or used (ACTIVE). 0: now (recovery: nobody could be
  // seen while the server was down).
  int64_t seen_at_ms = 0;
  uint8_t lane = JoinRequest::kLastLane;  // as the join named it
  uint16_t probation_s = 0;               // as the join asked
};

struct RoomCounters {
  uint64_t waiting = 0;
  uint64_t active = 0;  // ALLOWED + ACTIVE
  uint64_t joined_total = 0;
  uint64_t admitted_total = 0;
  uint64_t left_total = 0;
  uint64_t expired_allowed_unused = 0;
  uint64_t expired_session_idle = 0;
  uint64_t expired_abandoned = 0;
  uint64_t cleared_total = 0;
  std::optional<double> admit_rate_per_second;  // observed; none until known
};

struct RoomInfo {
  std::string name;
  RoomConfig config;
  RoomCounters counters;
};

// A push hint: something the engine's embedder may want to tell listeners about. Hints are
// lossy and may arrive out of order (see Engine::poll_events); the counts are as seen when
// the hint was made, so a reader that needs them exact re-reads the room.
struct Event {
  enum class Kind : uint8_t {
    kAdmitted,        // ticket: WAITING -> ALLOWED
    kExpired,         // ticket: -> EXPIRED, reason set
    kPositionsMoved,  // room: tickets waiting at or after `from_position` moved up
    kCountsChanged,   // room: waiting / active / capacity changed
  };
  Kind kind = Kind::kCountsChanged;
  std::string room;
  TicketId ticket{};  // kAdmitted, kExpired
  EndReason reason = EndReason::kNone;
  uint64_t waiting = 0;  // room counts after the change
  uint64_t active = 0;
  uint32_t capacity = 0;
};

}  // namespace anteroom
