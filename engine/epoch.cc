#include "engine/epoch.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>
#include <thread>
#include <vector>

namespace anteroom::epoch {

struct ThreadRecord {
  // The epoch this thread pinned, or 0 while it is not in a reader section. Written by its
  // thread (relaxed on pin, see Guard; release on unpin), read by the reclaimer (acquire).
  std::atomic<uint64_t> pinned{0};
  uint32_t depth = 0;               // nesting; its thread only
  std::atomic<bool> in_use{false};  // a live thread owns this record
  ThreadRecord* next = nullptr;     // the registry list; immutable once linked
};

namespace {

// Epochs start at 1 so that 0 can mean "not pinned". Advanced by the reclaimer (release),
// read by pins (relaxed: a stale value only makes the pin more conservative).
std::atomic<uint64_t> g_epoch{1};
// Every record ever made; records are never freed, only reused. Pushed by CAS (release),
// walked with acquire.
std::atomic<ThreadRecord*> g_records{nullptr};

struct Retired {
  void* p;
  Deleter deleter;
  size_t bytes;
  uint64_t epoch;  // the global epoch when it was unlinked
};
std::mutex g_retired_mu;
// Guarded by g_retired_mu. Never destroyed: what is still retired when the process ends
// stays reachable (a leak check at exit, ASan's or a fuzzer's, would otherwise report it),
// and a thread that retires during exit still finds the list whole.
std::vector<Retired>& g_retired = *new std::vector<Retired>;
// Counts readable without the lock: relaxed, statistics and a fast "nothing to do".
std::atomic<size_t> g_pending{0}, g_pending_bytes{0};
std::mutex g_reclaim_mu;  // one reclaimer at a time

bool membarrier_works() {
  long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

// The reclaimer's side of the asymmetric fence: every thread of the process runs a full
// barrier before this returns, so each reader's pin store is visible here or its later
// loads see what was unlinked before this call.
void heavy_barrier() {
  if (!readers_fence()) {
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

struct RecordHolder {
  ThreadRecord* rec = nullptr;
  ~RecordHolder() {
    if (rec != nullptr) rec->in_use.store(false, std::memory_order_release);
  }
};

ThreadRecord* acquire_record() {
  for (ThreadRecord* r = g_records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    bool free = false;
    if (r->in_use.compare_exchange_strong(free, true, std::memory_order_acq_rel)) return r;
  }
  auto* r = new ThreadRecord;  // kept for the life of the process
  r->in_use.store(true, std::memory_order_relaxed);
  ThreadRecord* head = g_records.load(std::memory_order_relaxed);
  do {
    r->next = head;
  } while (!g_records.compare_exchange_weak(head, r, std::memory_order_release,
                                            std::memory_order_relaxed));
  return r;
}

}  // namespace

bool readers_fence() {
  static const bool fence = !membarrier_works();
  return fence;
}

ThreadRecord& my_record() {
  thread_local RecordHolder holder;
  if (holder.rec == nullptr) holder.rec = acquire_record();
  return *holder.rec;
}

Guard::Guard() : rec_(my_record()) {
  if (rec_.depth++ != 0) return;
  rec_.pinned.store(g_epoch.load(std::memory_order_relaxed), std::memory_order_relaxed);
  // The pin must be visible before this thread reads a pointer it protects. heavy_barrier()
  // provides the other half; without membarrier the reader pays for a real fence.
  if (readers_fence()) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
}

Guard::~Guard() {
  // release: everything read in the section happens before the reclaimer sees it unpinned.
  if (--rec_.depth == 0) rec_.pinned.store(0, std::memory_order_release);
}

void retire(void* p, Deleter deleter, size_t bytes) {
  std::lock_guard lock(g_retired_mu);
  g_retired.push_back({p, deleter, bytes, g_epoch.load(std::memory_order_acquire)});
  g_pending.fetch_add(1, std::memory_order_relaxed);
  g_pending_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

size_t reclaim() {
  if (g_pending.load(std::memory_order_relaxed) == 0) return 0;
  std::unique_lock reclaimer(g_reclaim_mu, std::try_to_lock);
  if (!reclaimer) return 0;  // someone else is at it
  // Two rounds: each moves the epoch on if every pinned reader has seen it; pins are short,
  // so the second usually succeeds at once and frees what was retired before the first.
  uint64_t now = g_epoch.load(std::memory_order_acquire);
  for (int round = 0; round < 2; ++round) {
    heavy_barrier();
    bool all_seen = true;
    for (ThreadRecord* r = g_records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
      const uint64_t pinned = r->pinned.load(std::memory_order_acquire);
      if (pinned != 0 && pinned != now) all_seen = false;
    }
    if (!all_seen) break;
    g_epoch.store(++now, std::memory_order_release);
  }
  // Safe: unlinked at epoch r, and no reader pinned at r or before remains once the epoch
  // has moved twice since (each move needs every pinned reader at the newer epoch).
  std::vector<Retired> free_now;
  {
    std::lock_guard lock(g_retired_mu);
    auto keep = g_retired.begin();
    for (Retired& r : g_retired) {
      if (r.epoch + 2 <= now) {
        free_now.push_back(r);
      } else {
        *keep++ = r;
      }
    }
    g_retired.erase(keep, g_retired.end());
  }
  size_t bytes = 0;
  for (const Retired& r : free_now) {
    r.deleter(r.p);
    bytes += r.bytes;
  }
  g_pending.fetch_sub(free_now.size(), std::memory_order_relaxed);
  g_pending_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  return free_now.size();
}

size_t drain() {
  size_t freed = 0;
  for (int round = 0; round < 10000 && pending() > 0; ++round) {
    const size_t n = reclaim();
    freed += n;
    if (n == 0) std::this_thread::yield();
  }
  return freed;
}

size_t pending() { return g_pending.load(std::memory_order_relaxed); }
size_t pending_bytes() { return g_pending_bytes.load(std::memory_order_relaxed); }

}  // namespace anteroom::epoch
