// The line of one room: every ticket ever issued, indexed by its sequence number, plus
// what is needed to answer "how many WAITING tickets are ahead of sequence s" without a lock.
//
// Thread safety
//   claim(), slot_for_publish(), find(), waiting_before(), claimed(), cursor() may be called
//   by any thread at any time. add_hole() and advance_cursor() belong to the room's owner
//   (whoever holds its shard's owner mutex) and must never run concurrently.
//
// Order: claim() is one fetch_add on the tail, so sequence numbers are handed out in one
// total order, and a join that returned before another began has the smaller number.
//
// Counting: every ticket below the cursor is known not to be WAITING. A ticket at or above
// the cursor that stopped WAITING (left, abandoned, cleared) is a "hole"; the owner records
// it in a per-segment Fenwick tree. Then
//   waiting ahead of s = (s - cursor) - holes in [cursor, s).
// Only the owner writes the cursor and the trees, and it only adds holes at or above the
// cursor, so a reader that loads the cursor first sees a prefix below it that no longer
// changes: positions read concurrently may lag an in-flight change but never grow.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/model.h"

namespace anteroom {

class UserNode;

// One ticket. 32 bytes. Plain fields: the shared ones are accessed through std::atomic_ref
// so slots can live in calloc'd memory that the OS commits lazily.
struct Slot {
  uint8_t state;        // 0 until published; then TicketState | (EndReason << 4)
  uint8_t owner_flags;  // owner only: kHoleCounted
  uint16_t unused;
  uint32_t last_seen;    // clock ticks (100 ms): last heartbeat (WAITING) or use (ACTIVE)
  uint32_t admitted_at;  // clock ticks; written by the owner before the state says ALLOWED
  uint32_t tag[3];
  const UserNode* user;  // null for anonymous joins; immutable after publish
};
static_assert(sizeof(Slot) == 32);

constexpr uint8_t kHoleCounted = 1;

inline uint8_t pack_state(TicketState s, EndReason r) {
  return static_cast<uint8_t>(static_cast<uint8_t>(s) | (static_cast<uint8_t>(r) << 4));
}
inline TicketState state_of(uint8_t packed) { return static_cast<TicketState>(packed & 15); }
inline EndReason reason_of(uint8_t packed) { return static_cast<EndReason>(packed >> 4); }

// Load with acquire: pairs with the release that published the slot or changed its state,
// so fields written before that (tag, user, admitted_at) are visible.
inline uint8_t load_state(const Slot& s) {
  return std::atomic_ref<const uint8_t>(s.state).load(std::memory_order_acquire);
}
// acq_rel: the winner both sees what the previous state published and publishes its own.
inline bool cas_state(Slot& s, uint8_t& expected, uint8_t desired) {
  return std::atomic_ref<uint8_t>(s.state).compare_exchange_strong(expected, desired,
                                                                   std::memory_order_acq_rel);
}

class Line {
 public:
  Line();
  ~Line();
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  // Reserves the next sequence number. The caller must then publish slot_for_publish(seq).
  uint64_t claim();
  // The slot for a claimed number, allocating its segment if this is the first use.
  Slot& slot_for_publish(uint64_t seq);
  // The slot for `seq`, or null if its segment does not exist yet.
  Slot* find(uint64_t seq) const;

  uint64_t claimed() const { return tail_.load(std::memory_order_acquire); }
  uint64_t cursor() const { return cursor_.load(std::memory_order_acquire); }
  // WAITING (or claimed and not yet published) tickets with a sequence number below `seq`.
  uint64_t waiting_before(uint64_t seq) const;
  uint64_t waiting() const { return waiting_before(claimed()); }

  // Owner only. Records that `seq` (>= cursor, published, no longer WAITING) is a hole.
  void add_hole(uint64_t seq, Slot& slot);
  // Owner only. Moves the cursor to `to`; every slot in [cursor, to) must be non-WAITING.
  void advance_cursor(uint64_t to);

  // Bytes allocated for slots and trees.
  size_t bytes_allocated() const;

 private:
  struct Segment;
  static constexpr int kFirstBits = 10;  // segment k holds 2^(10+k) tickets
  static constexpr int kMaxSegments = 40;

  static void locate(uint64_t seq, int* segment, uint64_t* offset);
  uint64_t holes_below(int seg, uint64_t off) const;  // holes in segment `seg` before `off`

  // Relaxed is enough for the tail's fetch_add ordering among joiners (it is one RMW chain);
  // acquire/release on it publish nothing else: each slot publishes itself.
  std::atomic<uint64_t> tail_{0};
  // Written by the owner with release after the slots it passes changed state; loaded with
  // acquire by readers.
  std::atomic<uint64_t> cursor_{0};
  // Counted holes at or above the cursor. Zero lets readers skip the trees. The owner adds
  // (release) after updating a tree and subtracts (release) after moving the cursor past
  // holes; readers load it (acquire) before the cursor.
  std::atomic<uint64_t> holes_ahead_{0};
  std::atomic<Segment*> segments_[kMaxSegments] = {};
};

}  // namespace anteroom
