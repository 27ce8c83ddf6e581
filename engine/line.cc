#include "engine/line.h"

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <new>

namespace anteroom {

namespace {

// Zeroed memory that the OS commits only when touched. Large blocks are mapped directly and
// asked to use transparent huge pages: status reads land on random slots of a big line, and
// with 4 KiB pages nearly every one of them would also miss the TLB.
constexpr size_t kHugePage = size_t{2} << 20;

void* zeroed(size_t bytes) {
  if (bytes < kHugePage) {
    void* p = std::calloc(1, bytes);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint: failure only costs speed
  return p;
}

void release(void* p, size_t bytes) {
  if (bytes < kHugePage) {
    std::free(p);
  } else {
    munmap(p, bytes);
  }
}

}  // namespace

// A segment: `size` slots and a Fenwick tree over them counting holes.
struct Line::Segment {
  explicit Segment(uint64_t n)
      : size(n),
        slots(static_cast<Slot*>(zeroed(n * sizeof(Slot)))),
        tree(static_cast<uint32_t*>(zeroed((n + 1) * sizeof(uint32_t)))) {}
  ~Segment() {
    release(slots, size * sizeof(Slot));
    release(tree, (size + 1) * sizeof(uint32_t));
  }
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  uint64_t size;
  Slot* slots;
  uint32_t* tree;                  // 1-based Fenwick tree; owner writes, anyone reads
  std::atomic<uint64_t> holes{0};  // total of the tree; owner writes (release)
};

Line::Line() = default;

Line::~Line() {
  for (auto& s : segments_) delete s.load(std::memory_order_relaxed);
}

void Line::locate(uint64_t seq, int* segment, uint64_t* offset) {
  uint64_t v = seq + (uint64_t{1} << kFirstBits);
  int top = 63 - std::countl_zero(v);
  *segment = top - kFirstBits;
  *offset = v - (uint64_t{1} << top);
}

uint64_t Line::claim() { return tail_.fetch_add(1, std::memory_order_relaxed); }

Slot& Line::slot_for_publish(uint64_t seq) {
  int seg = 0;
  uint64_t off = 0;
  locate(seq, &seg, &off);
  // acquire: pairs with the release CAS below so the segment's memory is seen initialised.
  Segment* s = segments_[seg].load(std::memory_order_acquire);
  if (s == nullptr) {
    auto* fresh = new Segment(uint64_t{1} << (kFirstBits + seg));
    if (segments_[seg].compare_exchange_strong(s, fresh, std::memory_order_acq_rel)) {
      s = fresh;
    } else {
      delete fresh;  // another joiner installed it first; `s` now holds theirs
    }
  }
  return s->slots[off];
}

Slot* Line::find(uint64_t seq) const {
  int seg = 0;
  uint64_t off = 0;
  locate(seq, &seg, &off);
  if (seg >= kMaxSegments) return nullptr;
  Segment* s = segments_[seg].load(std::memory_order_acquire);
  return s == nullptr ? nullptr : &s->slots[off];
}

uint64_t Line::holes_below(int seg, uint64_t off) const {
  const Segment* s = segments_[seg].load(std::memory_order_acquire);
  if (s == nullptr) return 0;
  uint64_t sum = 0;
  for (uint64_t i = off; i > 0; i &= i - 1) {
    // Relaxed per cell: the owner's release on holes_ahead_/cursor_, which the reader
    // acquired first, orders every cell write that the reader must see.
    sum += std::atomic_ref<const uint32_t>(s->tree[i]).load(std::memory_order_relaxed);
  }
  return sum;
}

uint64_t Line::waiting_before(uint64_t seq) const {
  uint64_t holes = holes_ahead_.load(std::memory_order_acquire);
  uint64_t c = cursor_.load(std::memory_order_acquire);
  if (seq <= c) return 0;
  if (holes == 0) return seq - c;
  int seg_c = 0, seg_s = 0;
  uint64_t off_c = 0, off_s = 0;
  locate(c, &seg_c, &off_c);
  locate(seq, &seg_s, &off_s);
  uint64_t between = 0;
  if (seg_c == seg_s) {
    between = holes_below(seg_s, off_s) - holes_below(seg_c, off_c);
  } else {
    const Segment* first = segments_[seg_c].load(std::memory_order_acquire);
    between =
        (first ? first->holes.load(std::memory_order_acquire) : 0) - holes_below(seg_c, off_c);
    for (int k = seg_c + 1; k < seg_s; ++k) {
      const Segment* mid = segments_[k].load(std::memory_order_acquire);
      if (mid != nullptr) between += mid->holes.load(std::memory_order_acquire);
    }
    between += holes_below(seg_s, off_s);
  }
  uint64_t span = seq - c;
  return between >= span ? 0 : span - between;
}

void Line::add_hole(uint64_t seq, Slot& slot) {
  if (slot.owner_flags & kHoleCounted) return;
  if (seq < cursor_.load(std::memory_order_relaxed)) return;  // already passed
  slot.owner_flags |= kHoleCounted;
  int seg = 0;
  uint64_t off = 0;
  locate(seq, &seg, &off);
  Segment* s = segments_[seg].load(std::memory_order_acquire);
  for (uint64_t i = off + 1; i <= s->size; i += i & (~i + 1)) {
    std::atomic_ref<uint32_t> cell(s->tree[i]);
    cell.store(cell.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  s->holes.fetch_add(1, std::memory_order_release);
  holes_ahead_.fetch_add(1, std::memory_order_release);
}

void Line::advance_cursor(uint64_t to) {
  uint64_t from = cursor_.load(std::memory_order_relaxed);
  if (to <= from) return;
  uint64_t passed = 0;
  for (uint64_t seq = from; seq < to; ++seq) {
    Slot* s = find(seq);
    if (s != nullptr && (s->owner_flags & kHoleCounted)) ++passed;
  }
  cursor_.store(to, std::memory_order_release);
  if (passed != 0) holes_ahead_.fetch_sub(passed, std::memory_order_release);
}

size_t Line::bytes_allocated() const {
  size_t total = sizeof(*this);
  for (const auto& seg : segments_) {
    const Segment* s = seg.load(std::memory_order_acquire);
    if (s != nullptr) total += sizeof(Segment) + s->size * (sizeof(Slot) + sizeof(uint32_t));
  }
  return total;
}

}  // namespace anteroom
