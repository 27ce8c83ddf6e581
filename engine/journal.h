// The change journal: every state change of every room, told to one consumer as it happens,
// never dropped. Storage writes each as a record of the one vocabulary a cluster appends too
// (engine/ops.h: a change is the op that names its tickets; storage/log_records.h).
//
// What is told, and when:
//   room_put      a room was created or its configuration changed; before any join of a
//                 new room can happen
//   room_delete   a room was removed
//   join          a new ticket (seq, tag, user): after its place is claimed and BEFORE the
//                 ticket can be seen, so a ticket's join always precedes its other changes
//   admit         WAITING -> ALLOWED
//   activate      ALLOWED -> ACTIVE (first use at the protected service; refreshes are not
//                 told, like heartbeats)
//   leave         a live ticket -> LEFT (the visitor left)
//   expire        a live ticket -> EXPIRED, with the reason
//   clear         these WAITING tickets -> LEFT (cleared), in one change
//   draw          the pre-queue of the room's event was drawn (the DrawInfo; told right
//                 before the room_put that says the event started)
//
// Order: changes of one ticket are told in the order they happened, except that two
// threads changing the same ticket within a moment of each other (an admission racing the
// visitor's first use, say) may be told in either order. A ticket's states only ever move
// forward (WAITING < ALLOWED < ACTIVE < ended), so a consumer that applies each change only
// if it moves the ticket forward rebuilds the live state whatever the order.
//
// Thread safety: record() is called from any thread, concurrently, sometimes with a room's
// owner lock held: it must not call back into the engine. It may block (back-pressure); it
// must not lose a change.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "engine/model.h"

namespace anteroom {

struct Change {
  enum class Kind : uint8_t {
    kRoomPut,
    kRoomDelete,
    kJoin,
    kAdmit,
    kActivate,
    kLeave,
    kExpire,
    kClear,
    kDraw,
  };
  Kind kind = Kind::kJoin;
  std::string_view room;
  uint64_t seq = 0;                       // join, admit, activate, leave, expire
  std::array<uint32_t, 3> tag{};          // join: the random part of the ticket's id
  std::string_view user;                  // join; empty for anonymous joins
  const KeyHash* key_hash = nullptr;      // join: a bound admission's key hash
  uint8_t lane = JoinRequest::kLastLane;  // join: as JoinRequest::lane
  uint16_t probation_s = 0;               // join: as JoinRequest::probation_s
  EndReason reason = EndReason::kNone;    // expire
  int64_t at_ms = 0;                      // engine clock: when it happened
  const RoomConfig* config = nullptr;     // room_put
  std::span<const uint64_t> seqs;         // clear: the tickets cleared, ascending
  const DrawInfo* draw = nullptr;         // draw
};

class Journal {
 public:
  virtual ~Journal() = default;
  // Takes one change. Returns a position to wait for before acknowledging the change
  // (Engine::when_durable), or 0 when there is nothing to wait for.
  virtual uint64_t record(const Change& change) = 0;
};

}  // namespace anteroom
