// The line of one room: its tickets indexed by sequence number, what is needed to answer
// "how many WAITING tickets are ahead of sequence s" without a lock, and the memory of ended
// tickets given back.
//
// Layout: a ticket's slot lives in a segment of 1,024 slots; 1,024 segments make a chunk;
// a two-level directory (64 blocks of 1,024 chunk entries) holds the chunks. Readers go directory
// -> chunk -> segment -> slot with acquire loads and no lock. A segment whose tickets have all
// ended is replaced by a shared "ended" sentinel and retired (engine/epoch.h), whether the cursor
// has passed it or a waiting ticket still stands ahead of it (the sentinel counts as all holes, as
// its ended tickets did); a chunk whose segments are all gone likewise. So memory follows the live
// tickets: a room through which millions pass keeps only the segments its live tickets sit in.
//
// Thread safety
//   claim(), slot_for_publish(), find(), waiting_before(), claimed(), cursor() may be called
//   by any thread that holds an epoch pin. add_hole(), advance_cursor(), ended(),
//   restore_*() belong to the room's owner (whoever holds its owner lock).
//
// Order: claim() is one fetch_add on the tail, so sequence numbers are handed out in one
// total order, and a join that returned before another began has the smaller number.
//
// Counting: every ticket below the cursor is known not to be WAITING. A ticket at or above
// the cursor that stopped WAITING (left, abandoned, cleared) is a "hole"; the owner counts
// it in a Fenwick tree over its segment's slots and in its chunk's Fenwick tree over segment
// totals. Then
//   waiting ahead of s = (s - cursor) - holes in [cursor, s).
// Only the owner writes the cursor and the trees, and it only adds holes at or above the
// cursor, so a reader that loads the cursor first sees a prefix below it that no longer
// changes: positions read concurrently may lag an in-flight change but never grow.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "engine/model.h"

namespace anteroom {

struct TicketExtra;

// One ticket. 32 bytes. Plain fields: the shared ones are accessed through std::atomic_ref
// so slots can live in calloc'd memory that the OS commits lazily.
struct Slot {
  uint8_t state;         // 0 until published; then TicketState | (EndReason << 4)
  uint8_t owner_flags;   // owner only: kHoleCounted, kEndCounted
  uint16_t terms;        // set before publish: the join's lane and probation (slot_terms)
  uint32_t last_seen;    // clock ticks (100 ms): last heartbeat (WAITING) or use (ACTIVE)
  uint32_t admitted_at;  // clock ticks; written by the owner before the state says ALLOWED
  uint32_t tag[3];
  // The user's name and the client's key hash (null when the join gave neither). Immutable
  // after publish; freed with the slot's segment.
  const TicketExtra* extra;
};
static_assert(sizeof(Slot) == 32);

// A slot's terms: the lane its join named (JoinRequest::lane, 4 bits) and the seconds its
// admission holds the slot unused if shorter than the room's (JoinRequest::probation_s,
// 12 bits).
inline uint16_t slot_terms(uint8_t lane, uint16_t probation_s) {
  return static_cast<uint16_t>((lane & 15) << 12 | (probation_s & 0x0FFF));
}
inline uint8_t terms_lane(uint16_t terms) { return static_cast<uint8_t>(terms >> 12); }
inline uint16_t terms_probation(uint16_t terms) { return terms & 0x0FFF; }

constexpr uint8_t kHoleCounted = 1;
constexpr uint8_t kEndCounted = 2;

inline uint8_t pack_state(TicketState s, EndReason r) {
  return static_cast<uint8_t>(static_cast<uint8_t>(s) | (static_cast<uint8_t>(r) << 4));
}
inline TicketState state_of(uint8_t packed) { return static_cast<TicketState>(packed & 15); }
inline EndReason reason_of(uint8_t packed) { return static_cast<EndReason>(packed >> 4); }

// Load with acquire: pairs with the release that published the slot or changed its state,
// so fields written before that (tag, extra, admitted_at) are visible.
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
  static constexpr int kSegmentBits = 10;  // slots per segment: 1,024
  static constexpr int kChunkBits = 10;    // segments per chunk: 1,024
  static constexpr uint64_t kSegment = uint64_t{1} << kSegmentBits;
  static constexpr uint64_t kChunk = kSegment << kChunkBits;  // tickets per chunk
  // No room hands out more sequence numbers than this (about 68 billion): claims beyond
  // are refused, and recovery refuses records past it.
  static constexpr uint64_t kMaxTickets = uint64_t{1} << 36;

  Line();
  ~Line();
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  // Reserves the next sequence number; false once kMaxTickets are spent (the number is
  // then beyond claimed() and must not be published). Otherwise the caller must publish
  // slot_for_publish(*seq).
  bool claim(uint64_t* seq);
  // The slot for a claimed number, allocating its segment (and chunk) if this is the first
  // use. Never the ended sentinel: a claimed number's segment is live until it is published.
  Slot& slot_for_publish(uint64_t seq);
  // The slot for `seq`: null if its segment does not exist yet, the shared ended sentinel
  // (state LEFT, no tag) if its segment was given back.
  Slot* find(uint64_t seq) const;
  // True for the shared sentinel of given-back segments.
  static bool is_sentinel(const Slot* s);
  // The first seq of the segment after the one holding `seq`.
  static uint64_t next_segment(uint64_t seq) { return (seq | (kSegment - 1)) + 1; }
  // The first seq at or after `seq` that is not in a given-back segment or chunk (walks
  // whole chunks at a time), or claimed() if there is none.
  uint64_t skip_ended(uint64_t seq) const;

  uint64_t claimed() const { return std::min(tail_.load(std::memory_order_acquire), kMaxTickets); }
  // claimed(), read in the one total order of seq_cst operations: with claim()'s own
  // seq_cst, a flag stored before this read is seen by every claim this read missed
  // (room_lanes.cc relies on it).
  uint64_t claimed_seq_cst() const {
    return std::min(tail_.load(std::memory_order_seq_cst), kMaxTickets);
  }
  uint64_t cursor() const { return cursor_.load(std::memory_order_acquire); }
  // WAITING (or claimed and not yet published) tickets with a sequence number below `seq`.
  uint64_t waiting_before(uint64_t seq) const;
  uint64_t waiting() const { return waiting_before(claimed()); }

  // Owner only. Records that `seq` (>= cursor, published, no longer WAITING) is a hole.
  void add_hole(uint64_t seq, Slot& slot);
  // Owner only. Moves the cursor to `to`; every slot in [cursor, to) must be non-WAITING.
  void advance_cursor(uint64_t to);
  // Owner only. Ticket `seq` has ended (told once per ticket; later calls are ignored); at
  // or above the cursor it must already be a counted hole. The last end of a segment gives
  // the segment back.
  void ended(uint64_t seq, Slot& slot);

  // Recovery, owner only, on a new line, in this order: restore_begin(tail, cursor), then
  // restore_slot() for each recovered ticket (ascending), then restore_end(), which makes
  // every other number below `tail` an ended ticket without allocating for whole segments.
  void restore_begin(uint64_t tail, uint64_t cursor);
  Slot& restore_slot(uint64_t seq);
  void restore_end();

  // Bytes allocated for slots, trees and the directory.
  size_t bytes_allocated() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  struct Segment;
  struct Chunk;
  struct Block;
  static constexpr uint64_t kChunksPerBlock = 1024;
  static constexpr uint64_t kBlocks = kMaxTickets / kChunk / kChunksPerBlock;

  static Segment* ended_segment_ptr();  // the sentinel of a given-back segment
  static Chunk* gap_chunk_ptr();        // the sentinel of a chunk with no ticket left
  static Block* gap_block_ptr();        // a block of chunks with no ticket at all
  static void free_segment_memory(void* p);
  // The directory entry of chunk `c`, allocating its block if needed; under alloc_mu_.
  std::atomic<Chunk*>& chunk_entry(uint64_t c);

  Chunk* chunk_at(uint64_t c) const;
  Chunk* chunk_for(uint64_t seq) const;
  Segment* segment_for(uint64_t seq) const;
  Segment* allocate(uint64_t seq);    // under alloc_mu_
  Chunk* allocate_chunk(uint64_t c);  // under alloc_mu_
  // Holes in [cursor, seq) within the cursor's chunk and seq's chunk.
  uint64_t holes_between(uint64_t cursor, uint64_t seq) const;
  // The segment holding `seq` is done: sentinel in, memory retired.
  void give_back(uint64_t seq);
  void give_back_chunk(uint64_t c);
  void add_gap_holes(uint64_t seg_start);  // a whole sentinel segment above the cursor
  void restore_segment(Chunk* ch, uint64_t start, uint64_t tail, uint64_t cursor);

  std::atomic<uint64_t> tail_{0};
  // Written by the owner with release after the slots it passes changed state; loaded with
  // acquire by readers.
  std::atomic<uint64_t> cursor_{0};
  // Counted holes at or above the cursor. Zero lets readers skip the trees. The owner adds
  // (release) after updating the trees and subtracts (release) after moving the cursor past
  // holes; readers load it (acquire) before the cursor.
  std::atomic<uint64_t> holes_ahead_{0};
  // The directory's first level: blocks of chunk entries, allocated (release) when first
  // needed and loaded with acquire; a room that never grows past a billion tickets has one.
  std::atomic<Block*> top_[kBlocks] = {};
  std::mutex alloc_mu_;           // allocating segments, chunks and directories
  std::atomic<size_t> bytes_{0};  // statistics: relaxed
};

}  // namespace anteroom
