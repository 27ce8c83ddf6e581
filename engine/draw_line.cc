#include "engine/draw_line.h"

#include <utility>

namespace anteroom {

DrawLine::DrawLine(uint64_t first_seq, uint64_t end_seq, std::vector<uint64_t> seqs,
                   std::vector<uint64_t> refs, const std::array<uint8_t, 32>& seed)
    : first_(first_seq),
      seed_(seed),
      seqs_(std::move(seqs)),
      refs_(std::move(refs)),
      rank_of_(end_seq - first_seq, kNone),
      tree_(seqs_.size() + 1, 0),
      counted_(seqs_.size(), 0) {
  for (uint32_t r = 0; r < seqs_.size(); ++r) {
    if (seqs_[r] != kGone) rank_of_[seqs_[r] - first_] = r;
  }
}

uint64_t DrawLine::prefix(uint32_t count) const {
  uint64_t sum = 0;
  for (uint32_t i = count; i > 0; i &= i - 1) {
    sum += std::atomic_ref<const uint32_t>(tree_[i]).load(std::memory_order_relaxed);
  }
  return sum;
}

uint64_t DrawLine::waiting_before(uint32_t rank) const {
  const uint64_t holes = holes_ahead_.load(std::memory_order_acquire);
  const uint32_t c = cursor_.load(std::memory_order_acquire);
  if (rank <= c) return 0;
  const uint64_t span = rank - c;
  if (holes == 0) return span;
  const uint64_t between = prefix(rank) - prefix(c);
  return between >= span ? 0 : span - between;
}

void DrawLine::add_hole(uint32_t rank) {
  if (rank >= size() || counted_[rank] != 0 || rank < cursor_.load(std::memory_order_relaxed)) {
    return;
  }
  counted_[rank] = 1;
  for (uint64_t i = uint64_t{rank} + 1; i < tree_.size(); i += i & (~i + 1)) {
    std::atomic_ref<uint32_t> cell(tree_[i]);
    cell.store(cell.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  holes_ahead_.fetch_add(1, std::memory_order_release);
}

void DrawLine::advance_cursor(uint32_t to) {
  const uint32_t from = cursor_.load(std::memory_order_relaxed);
  if (to <= from) return;
  uint64_t passed = 0;
  for (uint32_t r = from; r < to; ++r) passed += counted_[r];
  cursor_.store(to, std::memory_order_release);
  if (passed != 0) holes_ahead_.fetch_sub(passed, std::memory_order_release);
}

size_t DrawLine::bytes() const {
  return seqs_.size() * (sizeof(uint64_t) * 2 + sizeof(uint32_t) + 1) +
         rank_of_.size() * sizeof(uint32_t);
}

}  // namespace anteroom
