#include "engine/lane_line.h"

#include <algorithm>

namespace anteroom {

void LaneLine::add(uint64_t seq) {
  if (!seqs_.empty() && seq < seqs_.back()) {
    auto at = std::lower_bound(seqs_.begin(), seqs_.end(), seq);
    if (at != seqs_.end() && *at == seq) return;
    const auto i = at - seqs_.begin();
    seqs_.insert(at, seq);
    counted_.insert(counted_.begin() + i, 0);
    const size_t at_index = static_cast<size_t>(i);
    if (at_index < cursor_) {  // behind the cursor: it comes back to the new ticket, and
      for (size_t k = at_index + 1; k <= cursor_; ++k) counted_[k] = 1;  // what it passed
      cursor_ = at_index;                                                // counts as holes
    }
    return rebuild();
  }
  if (tree_.empty()) tree_.push_back(0);
  seqs_.push_back(seq);
  counted_.push_back(0);
  // The new cell covers indexes [p - lowbit(p), p - 1]; the last of them (the new ticket)
  // is no hole, so it holds the holes of the others.
  const size_t p = seqs_.size();
  const size_t low = p & (~p + 1);
  tree_.push_back(static_cast<uint32_t>(prefix(p - 1) - prefix(p - low)));
}

void LaneLine::add_front(const std::vector<uint64_t>& seqs) {
  if (seqs.empty()) return;
  for (size_t k = 0; k < cursor_; ++k) counted_[k] = 1;  // passed: holes, now the cursor is 0
  seqs_.insert(seqs_.begin(), seqs.begin(), seqs.end());
  counted_.insert(counted_.begin(), seqs.size(), 0);
  cursor_ = 0;  // what is put in front waits
  rebuild();
}

size_t LaneLine::index_of(uint64_t seq) const {
  auto it = std::lower_bound(seqs_.begin(), seqs_.end(), seq);
  return it != seqs_.end() && *it == seq ? static_cast<size_t>(it - seqs_.begin()) : kNone;
}

uint64_t LaneLine::prefix(size_t count) const {
  uint64_t sum = 0;
  for (size_t p = count; p > 0; p &= p - 1) sum += tree_[p];
  return sum;
}

uint64_t LaneLine::waiting_before(size_t index) const {
  if (index <= cursor_) return 0;
  return (index - cursor_) - (prefix(index) - prefix(cursor_));
}

void LaneLine::add_hole(size_t index) {
  if (index < cursor_ || index >= seqs_.size() || counted_[index] != 0) return;
  counted_[index] = 1;
  ++holes_ahead_;
  for (size_t p = index + 1; p < tree_.size(); p += p & (~p + 1)) ++tree_[p];
}

void LaneLine::advance_cursor(size_t to) {
  to = std::min(to, seqs_.size());
  if (to <= cursor_) return;
  holes_ahead_ -= prefix(to) - prefix(cursor_);
  cursor_ = to;
  if (cursor_ >= 4096 && cursor_ * 2 >= seqs_.size()) compact();
}

// Drops the indexes before the cursor and builds the tree again over what is left: linear,
// and done only once the dropped part is at least half the lane.
void LaneLine::compact() {
  seqs_.erase(seqs_.begin(), seqs_.begin() + static_cast<std::ptrdiff_t>(cursor_));
  counted_.erase(counted_.begin(), counted_.begin() + static_cast<std::ptrdiff_t>(cursor_));
  cursor_ = 0;
  rebuild();
  seqs_.shrink_to_fit();
  counted_.shrink_to_fit();
  tree_.shrink_to_fit();
}

// Cells count holes at or after the cursor only (advance_cursor subtracts the range it
// passes, so what lies before the cursor never counts).
void LaneLine::rebuild() {
  tree_.assign(seqs_.size() + 1, 0);
  holes_ahead_ = 0;
  for (size_t i = cursor_; i < counted_.size(); ++i) {
    tree_[i + 1] = counted_[i];
    holes_ahead_ += counted_[i];
  }
  for (size_t p = 1; p < tree_.size(); ++p) {  // each cell adds itself to its parent
    const size_t parent = p + (p & (~p + 1));
    if (parent < tree_.size()) tree_[parent] += tree_[p];
  }
}

size_t LaneLine::bytes() const {
  return seqs_.capacity() * sizeof(uint64_t) + tree_.capacity() * sizeof(uint32_t) +
         counted_.capacity();
}

}  // namespace anteroom
