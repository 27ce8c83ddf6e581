// Safe memory reclamation for the engine's lock-free readers (epoch-based, as in Fraser's
// thesis): a reader pins the current epoch for the length of one engine call; memory that
// an owner unlinks (a deleted room, a segment of ended tickets, a ticket's user name) is
// retired, and freed only once every reader that could still hold a pointer to it has
// unpinned.
//
// Readers must be cheap: status runs tens of millions of times a second. A pin is a
// thread-local store and a compiler barrier; the full memory barrier that epoch schemes need
// between a reader's announcement and its reads is paid instead by the reclaimer, once per
// reclamation, with membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which makes every thread of
// the process execute one (the "asymmetric fence" of liburcu and folly). Where the kernel
// lacks it, readers fall back to a seq_cst fence of their own.
//
// Thread safety: everything from any thread. Pins nest (a pinned thread may pin again).
// One domain serves the whole process, so a thread that reads several engines has one
// record.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace anteroom::epoch {

// Called with `p` once no reader can reach it.
using Deleter = void (*)(void* p);

// The calling thread's record: registered on first use, recycled when the thread ends.
struct ThreadRecord;
ThreadRecord& my_record();

// True when readers need their own fence (no membarrier): read once at start.
bool readers_fence();

// Reader section: pins the current epoch from construction to destruction.
class Guard {
 public:
  Guard();
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  ThreadRecord& rec_;
};

// Unlinked memory, freed by `deleter` once every reader pinned when it was retired is gone.
// `bytes` is what it holds, for the statistics.
void retire(void* p, Deleter deleter, size_t bytes);
template <typename T>
void retire(T* p) {
  retire(
      p, [](void* q) { delete static_cast<T*>(q); }, sizeof(T));
}

// Frees what is safe to free and moves the epoch on when every pinned reader has seen it.
// Cheap when nothing waits (one relaxed load); otherwise two membarrier calls. Returns how
// many were freed.
size_t reclaim();

// Frees everything retired so far, waiting (yielding) for pinned readers to move on; for an
// engine going away, whose retired rooms nothing else would free. Gives up after a bounded
// number of rounds if a reader stays pinned. Returns how many were freed.
size_t drain();

// Retired and not yet freed, for statistics and tests.
size_t pending();
size_t pending_bytes();

}  // namespace anteroom::epoch
