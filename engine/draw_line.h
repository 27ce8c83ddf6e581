// The pre-queue of a shuffled event once drawn: its tickets in drawn order (ranks), and what
// answers "how many WAITING tickets are drawn ahead of rank r" without a lock, the way Line
// answers it for sequence numbers (line.h): a cursor (every rank below it is not WAITING), a
// Fenwick tree of holes (ranks at or above the cursor that stopped WAITING), and
//   waiting ahead of r = (r - cursor) - holes in [cursor, r).
//
// Thread safety: built whole by the owner, then published; rank_of(), seq_at(), refs(),
// waiting_before() and cursor() from any thread; add_hole() and advance_cursor() by the
// room's owner only. Readers load the hole count, then the cursor (acquire), then tree cells,
// so a count read during a change may lag it but never grows.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

namespace anteroom {

class DrawLine {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint64_t kGone = UINT64_MAX;  // a drawn ticket no longer here (restored)

  // `seqs` and `refs` in drawn order; every seq lies in [first_seq, end_seq) or is kGone.
  DrawLine(uint64_t first_seq, uint64_t end_seq, std::vector<uint64_t> seqs,
           std::vector<uint64_t> refs, const std::array<uint8_t, 32>& seed);
  DrawLine(const DrawLine&) = delete;
  DrawLine& operator=(const DrawLine&) = delete;

  uint64_t first_seq() const { return first_; }
  uint64_t end_seq() const { return first_ + rank_of_.size(); }
  uint32_t size() const { return static_cast<uint32_t>(seqs_.size()); }
  // The rank of `seq`, or kNone if it was not drawn.
  uint32_t rank_of(uint64_t seq) const {
    return seq < first_ || seq - first_ >= rank_of_.size() ? kNone : rank_of_[seq - first_];
  }
  uint64_t seq_at(uint32_t rank) const { return seqs_[rank]; }
  const std::vector<uint64_t>& refs() const { return refs_; }  // in drawn order
  const std::array<uint8_t, 32>& seed() const { return seed_; }

  uint32_t cursor() const { return cursor_.load(std::memory_order_acquire); }
  // WAITING tickets drawn ahead of `rank`.
  uint64_t waiting_before(uint32_t rank) const;
  // WAITING tickets not admitted from the draw yet (every rank from the cursor on).
  uint64_t waiting() const { return waiting_before(size()); }

  // Owner only: the ticket at `rank` stopped WAITING (counted once; below the cursor ignored).
  void add_hole(uint32_t rank);
  // Owner only: every rank in [cursor, to) is not WAITING.
  void advance_cursor(uint32_t to);
  size_t bytes() const;

 private:
  uint64_t prefix(uint32_t count) const;  // holes among the first `count` ranks

  const uint64_t first_;
  const std::array<uint8_t, 32> seed_;
  const std::vector<uint64_t> seqs_;
  const std::vector<uint64_t> refs_;
  std::vector<uint32_t> rank_of_;  // by seq - first_
  std::vector<uint32_t> tree_;     // Fenwick, 1-based: cells written by the owner, relaxed
  std::vector<uint8_t> counted_;   // owner only: the rank's hole is in the tree
  std::atomic<uint32_t> cursor_{0};
  std::atomic<uint64_t> holes_ahead_{0};  // counted holes at or above the cursor
};

}  // namespace anteroom
