// Line: recovery's side, filling a new line with recovered tickets and making every number
// without one an ended ticket at no memory cost for whole segments, chunks and blocks.
#include "engine/line.h"

#include <mutex>

#include "engine/line_parts.h"

namespace anteroom {
using line_parts::kSegMask;
using line_parts::kSegsPerChunk;
using line_parts::seg_in_chunk;

void Line::restore_begin(uint64_t tail, uint64_t cursor) {
  tail_.store(tail, std::memory_order_relaxed);
  cursor_.store(cursor, std::memory_order_release);
}

Slot& Line::restore_slot(uint64_t seq) { return slot_for_publish(seq); }

void Line::restore_end() {
  const uint64_t tail = claimed(), cursor = this->cursor();
  // Numbers with no recovered ticket are ended: in a segment that holds recovered tickets,
  // one slot each; a segment or chunk with none at all becomes the sentinel, no memory.
  auto count_gap = [&](uint64_t from, uint64_t to) {  // numbers [from, to) that never were
    to = std::min(tail, to);
    if (to > cursor) {
      holes_ahead_.fetch_add(to - std::max(cursor, from), std::memory_order_release);
    }
  };
  std::lock_guard lock(alloc_mu_);
  for (uint64_t c = 0; c * kChunk < tail; ++c) {
    const uint64_t chunk_start = c * kChunk;
    if (c % kChunksPerBlock == 0 &&
        top_[c / kChunksPerBlock].load(std::memory_order_relaxed) == nullptr) {
      // A whole block of chunks with nothing recovered: one sentinel, no memory.
      top_[c / kChunksPerBlock].store(gap_block_ptr(), std::memory_order_release);
      count_gap(chunk_start, chunk_start + kChunk * kChunksPerBlock);
      c += kChunksPerBlock - 1;
      continue;
    }
    Chunk* ch = chunk_for(chunk_start);
    if (ch == nullptr) {  // nothing recovered in this chunk: no memory for it at all
      chunk_entry(c).store(gap_chunk_ptr(), std::memory_order_release);
      count_gap(chunk_start, chunk_start + kChunk);
      continue;
    }
    for (uint64_t s = 0; s < kSegsPerChunk && chunk_start + s * kSegment < tail; ++s) {
      restore_segment(ch, chunk_start + s * kSegment, tail, cursor);
    }
  }
  // Segments whose tickets all ended are done at once.
  for (uint64_t start = skip_ended(0); start < tail; start = skip_ended(next_segment(start))) {
    Segment* seg = segment_for(start);
    if (seg != nullptr && seg->ended == kSegment) give_back(start);
  }
}

void Line::restore_segment(Chunk* ch, uint64_t start, uint64_t tail, uint64_t cursor) {
  std::atomic<Segment*>& entry = ch->segs[seg_in_chunk(start)];
  Segment* seg = entry.load(std::memory_order_relaxed);
  if (seg == nullptr) {  // no recovered ticket here
    entry.store(ended_segment_ptr(), std::memory_order_release);
    ++ch->given_back;
    if (start >= cursor) add_gap_holes(start);
    return;
  }
  const uint64_t end = std::min(tail, start + kSegment);
  for (uint64_t seq = start; seq < end; ++seq) {
    Slot& slot = seg->slots[seq & kSegMask];
    uint8_t packed = load_state(slot);
    if (packed == 0) {  // a number recovery has no ticket for: an ended one
      packed = pack_state(TicketState::kLeft, EndReason::kNone);
      std::atomic_ref<uint8_t>(slot.state).store(packed, std::memory_order_release);
    }
    if (state_of(packed) != TicketState::kWaiting) add_hole(seq, slot);
    if (!is_live(state_of(packed)) && !(slot.owner_flags & kEndCounted)) {
      slot.owner_flags |= kEndCounted;
      ++seg->ended;
    }
  }
}

}  // namespace anteroom
