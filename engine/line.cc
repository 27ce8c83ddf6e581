#include "engine/line.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "engine/epoch.h"
#include "engine/line_parts.h"
#include "engine/ticket_extra.h"

namespace anteroom {
namespace {

using line_parts::chunk_index;
using line_parts::kSegMask;
using line_parts::kSegsPerChunk;
using line_parts::seg_in_chunk;

// Fenwick trees (1-based). The owner writes cells with relaxed stores; readers load them
// relaxed, ordered by the acquire of holes_ahead_ and the cursor (see line.h).
void tree_add(uint32_t* tree, uint64_t size, uint64_t index) {
  for (uint64_t i = index; i <= size; i += i & (~i + 1)) {
    std::atomic_ref<uint32_t> cell(tree[i]);
    cell.store(cell.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
}
uint64_t tree_prefix(const uint32_t* tree, uint64_t count) {  // sum of the first `count`
  uint64_t sum = 0;
  for (uint64_t i = count; i > 0; i &= i - 1) {
    sum += std::atomic_ref<const uint32_t>(tree[i]).load(std::memory_order_relaxed);
  }
  return sum;
}

// Stand-ins for memory given back (or never needed: numbers recovery found no ticket for).
// Readers find an ended ticket there that no id matches; nothing ever writes to them.
Slot g_ended_slot{pack_state(TicketState::kLeft, EndReason::kNone), 0, 0, 0, 0, {0, 0, 0}, nullptr};
// Compared by address only.
char g_ended_segment_marker, g_gap_chunk_marker, g_gap_block_marker;

}  // namespace

Line::Segment* Line::ended_segment_ptr() {
  return reinterpret_cast<Segment*>(&g_ended_segment_marker);
}
Line::Chunk* Line::gap_chunk_ptr() { return reinterpret_cast<Chunk*>(&g_gap_chunk_marker); }
Line::Block* Line::gap_block_ptr() { return reinterpret_cast<Block*>(&g_gap_block_marker); }

bool Line::is_sentinel(const Slot* s) { return s == &g_ended_slot; }

Line::Line() = default;

void Line::free_segment_memory(void* p) {
  auto* s = static_cast<Segment*>(p);
  for (Slot& slot : s->slots) free_extra(slot.extra);
  s->~Segment();
  std::free(s);
}

Line::~Line() {
  for (auto& top : top_) {
    Block* b = top.load(std::memory_order_relaxed);
    if (b == nullptr || b == gap_block_ptr()) continue;
    for (auto& entry : b->chunks) {
      Chunk* ch = entry.load(std::memory_order_relaxed);
      if (ch == nullptr || ch == gap_chunk_ptr()) continue;
      for (auto& seg : ch->segs) {
        Segment* s = seg.load(std::memory_order_relaxed);
        if (s != nullptr && s != ended_segment_ptr()) free_segment_memory(s);
      }
      ch->~Chunk();
      std::free(ch);
    }
    delete b;
  }
}

Line::Chunk* Line::chunk_at(uint64_t c) const {
  if (c >= kChunksPerBlock * kBlocks) return nullptr;
  Block* b = top_[c / kChunksPerBlock].load(std::memory_order_acquire);
  if (b == nullptr) return nullptr;
  if (b == gap_block_ptr()) return gap_chunk_ptr();
  return b->chunks[c % kChunksPerBlock].load(std::memory_order_acquire);
}

Line::Chunk* Line::chunk_for(uint64_t seq) const { return chunk_at(chunk_index(seq)); }

Line::Segment* Line::segment_for(uint64_t seq) const {
  Chunk* ch = chunk_for(seq);
  if (ch == nullptr) return nullptr;
  if (ch == gap_chunk_ptr()) return ended_segment_ptr();
  return ch->segs[seg_in_chunk(seq)].load(std::memory_order_acquire);
}

Slot* Line::find(uint64_t seq) const {
  Segment* s = segment_for(seq);
  if (s == nullptr) return nullptr;
  if (s == ended_segment_ptr()) return &g_ended_slot;
  return &s->slots[seq & kSegMask];
}

uint64_t Line::skip_ended(uint64_t seq) const {
  const uint64_t tail = claimed();
  while (seq < tail) {
    Chunk* ch = chunk_for(seq);
    if (ch == gap_chunk_ptr()) {
      seq = (chunk_index(seq) + 1) * kChunk;
    } else if (ch != nullptr &&
               ch->segs[seg_in_chunk(seq)].load(std::memory_order_acquire) == ended_segment_ptr()) {
      seq = next_segment(seq);
    } else {
      return seq;
    }
  }
  return tail;
}

bool Line::claim(uint64_t* seq) {
  // One read-modify-write of the contended tail, no check before it (a load first would
  // fetch the cache line shared and then again to own it). A number past the range is
  // never published; claimed() hides it, so nothing counts or waits for it.
  // seq_cst costs nothing more than relaxed here (one locked add on x86) and orders the
  // claim with a room's switch to lanes (claimed_seq_cst).
  *seq = tail_.fetch_add(1, std::memory_order_seq_cst);
  return *seq < kMaxTickets;
}

std::atomic<Line::Chunk*>& Line::chunk_entry(uint64_t c) {
  std::atomic<Block*>& top = top_[c / kChunksPerBlock];
  Block* b = top.load(std::memory_order_relaxed);
  if (b == nullptr) {
    b = new Block;
    for (auto& entry : b->chunks) entry.store(nullptr, std::memory_order_relaxed);
    top.store(b, std::memory_order_release);  // the entries are seen initialised
    bytes_.fetch_add(sizeof(Block), std::memory_order_relaxed);
  }
  return b->chunks[c % kChunksPerBlock];
}

Line::Chunk* Line::allocate_chunk(uint64_t c) {
  std::atomic<Chunk*>& entry = chunk_entry(c);
  Chunk* ch = entry.load(std::memory_order_relaxed);
  if (ch != nullptr) return ch;
  void* m = std::calloc(1, sizeof(Chunk));
  if (m == nullptr) throw std::bad_alloc();
  ch = new (m) Chunk;
  entry.store(ch, std::memory_order_release);
  bytes_.fetch_add(sizeof(Chunk), std::memory_order_relaxed);
  return ch;
}

Line::Segment* Line::allocate(uint64_t seq) {
  std::lock_guard lock(alloc_mu_);
  Chunk* ch = allocate_chunk(chunk_index(seq));
  std::atomic<Segment*>& entry = ch->segs[seg_in_chunk(seq)];
  Segment* s = entry.load(std::memory_order_relaxed);
  if (s != nullptr) return s;  // another joiner was first
  void* m = std::calloc(1, sizeof(Segment));
  if (m == nullptr) throw std::bad_alloc();
  s = new (m) Segment;
  // release: the zeroed memory is seen initialised by whoever loads the pointer.
  entry.store(s, std::memory_order_release);
  bytes_.fetch_add(sizeof(Segment), std::memory_order_relaxed);
  return s;
}

Slot& Line::slot_for_publish(uint64_t seq) {
  Segment* s = segment_for(seq);
  if (s == nullptr) s = allocate(seq);
  return s->slots[seq & kSegMask];
}

uint64_t Line::holes_between(uint64_t a, uint64_t b) const {
  // Holes in the chunk before `seq`: whole segments from the chunk's tree, then the slots of
  // seq's own segment from the segment's tree.
  auto before = [](const Chunk* ch, uint64_t seq) -> uint64_t {
    if (ch == nullptr) return 0;  // nothing claimed there yet
    const uint64_t s = seg_in_chunk(seq), off = seq & kSegMask;
    if (ch == gap_chunk_ptr()) return s * kSegment + off;
    uint64_t sum = tree_prefix(ch->tree, s);
    const Segment* seg = ch->segs[s].load(std::memory_order_acquire);
    if (seg == ended_segment_ptr()) return sum + off;
    if (seg != nullptr) sum += tree_prefix(seg->tree, off);
    return sum;
  };
  auto total = [](const Chunk* ch) -> uint64_t {
    if (ch == nullptr) return 0;
    if (ch == gap_chunk_ptr()) return kChunk;
    return ch->holes.load(std::memory_order_acquire);
  };
  const uint64_t ca = chunk_index(a), cb = chunk_index(b);
  const Chunk* cha = chunk_for(a);
  const Chunk* chb = ca == cb ? cha : chunk_for(b);
  if (ca == cb) return before(chb, b) - before(cha, a);
  uint64_t sum = total(cha) - before(cha, a);
  for (uint64_t c = ca + 1; c < cb;) {
    const Block* block = top_[c / kChunksPerBlock].load(std::memory_order_acquire);
    if (block == gap_block_ptr() && c % kChunksPerBlock == 0 && c + kChunksPerBlock <= cb) {
      sum += kChunk * kChunksPerBlock;  // a block of numbers that never were tickets
      c += kChunksPerBlock;
      continue;
    }
    sum += total(chunk_at(c));
    ++c;
  }
  return sum + before(chb, b);
}

uint64_t Line::waiting_before(uint64_t seq) const {
  uint64_t holes = holes_ahead_.load(std::memory_order_acquire);
  uint64_t c = cursor_.load(std::memory_order_acquire);
  if (seq <= c) return 0;
  if (holes == 0) return seq - c;
  const uint64_t between = holes_between(c, seq);
  const uint64_t span = seq - c;
  return between >= span ? 0 : span - between;
}

void Line::add_hole(uint64_t seq, Slot& slot) {
  if (slot.owner_flags & kHoleCounted) return;
  if (seq < cursor_.load(std::memory_order_relaxed)) return;  // already passed
  slot.owner_flags |= kHoleCounted;
  Chunk* ch = chunk_for(seq);
  Segment* s = ch->segs[seg_in_chunk(seq)].load(std::memory_order_relaxed);
  tree_add(s->tree, kSegment, (seq & kSegMask) + 1);
  s->holes.fetch_add(1, std::memory_order_release);
  tree_add(ch->tree, kSegsPerChunk, seg_in_chunk(seq) + 1);
  ch->holes.fetch_add(1, std::memory_order_release);
  holes_ahead_.fetch_add(1, std::memory_order_release);
}

void Line::add_gap_holes(uint64_t seg_start) {
  Chunk* ch = chunk_for(seg_start);
  const uint64_t index = seg_in_chunk(seg_start) + 1;
  for (uint64_t i = index; i <= kSegsPerChunk; i += i & (~i + 1)) {
    std::atomic_ref<uint32_t> cell(ch->tree[i]);
    cell.store(cell.load(std::memory_order_relaxed) + static_cast<uint32_t>(kSegment),
               std::memory_order_relaxed);
  }
  ch->holes.fetch_add(kSegment, std::memory_order_release);
  holes_ahead_.fetch_add(kSegment, std::memory_order_release);
}

void Line::advance_cursor(uint64_t to) {
  const uint64_t from = cursor_.load(std::memory_order_relaxed);
  if (to <= from) return;
  uint64_t passed = 0;
  for (uint64_t seq = from; seq < to;) {
    Chunk* ch = chunk_for(seq);
    if (ch == gap_chunk_ptr()) {  // a whole chunk of numbers that never were tickets
      const uint64_t end = std::min(to, (chunk_index(seq) + 1) * kChunk);
      passed += end - seq;
      seq = end;
      continue;
    }
    Segment* s =
        ch == nullptr ? nullptr : ch->segs[seg_in_chunk(seq)].load(std::memory_order_relaxed);
    const uint64_t end = std::min(to, next_segment(seq));
    if (s == ended_segment_ptr()) {
      passed += end - seq;
    } else if (s != nullptr) {
      for (uint64_t q = seq; q < end; ++q)
        passed += (s->slots[q & kSegMask].owner_flags & kHoleCounted) != 0;
    }
    seq = end;
  }
  cursor_.store(to, std::memory_order_release);
  if (passed != 0) holes_ahead_.fetch_sub(passed, std::memory_order_release);
}

void Line::ended(uint64_t seq, Slot& slot) {
  if (is_sentinel(&slot) || (slot.owner_flags & kEndCounted)) return;
  slot.owner_flags |= kEndCounted;
  // Every ticket of the segment has ended: it is wholly below the cursor (memory nobody
  // counts in) or wholly above it, where each ended ticket is a counted hole, which is
  // exactly what the sentinel counts as. Either way it can go.
  Segment* s = segment_for(seq);
  if (++s->ended == kSegment) give_back(seq);
}

void Line::give_back(uint64_t seq) {
  Chunk* ch = chunk_for(seq);
  std::atomic<Segment*>& entry = ch->segs[seg_in_chunk(seq)];
  Segment* s = entry.load(std::memory_order_relaxed);
  entry.store(ended_segment_ptr(), std::memory_order_release);
  epoch::retire(s, free_segment_memory, sizeof(Segment));
  bytes_.fetch_sub(sizeof(Segment), std::memory_order_relaxed);
  // Once every segment is gone the chunk counts as all holes, which its tickets were.
  if (++ch->given_back == kSegsPerChunk) give_back_chunk(chunk_index(seq));
}

void Line::give_back_chunk(uint64_t c) {
  std::atomic<Chunk*>& entry = chunk_entry(c);
  Chunk* ch = entry.load(std::memory_order_relaxed);
  entry.store(gap_chunk_ptr(), std::memory_order_release);
  epoch::retire(
      ch,
      [](void* p) {
        static_cast<Chunk*>(p)->~Chunk();
        std::free(p);
      },
      sizeof(Chunk));
  bytes_.fetch_sub(sizeof(Chunk), std::memory_order_relaxed);
}

}  // namespace anteroom
