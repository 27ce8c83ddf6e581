#include "server/app/join_limiter.h"

#include <openssl/rand.h>

#include <algorithm>
#include <vector>

namespace anteroom {

struct JoinLimiter::Bucket {
  std::atomic<int64_t> index{-1};  // the bucket this table counts; -1: none yet
  struct alignas(64) Block {       // one cache line
    std::array<std::atomic<uint32_t>, kBlock> c{};
  };
  std::vector<Block> blocks = std::vector<Block>(kBlocks);
};

namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash_bytes(std::string_view s, uint64_t h) {
  for (unsigned char c : s) h = mix(h ^ c);
  return h;
}

size_t slot_of(int64_t b) { return static_cast<size_t>(b % JoinLimiter::kTables); }

}  // namespace

JoinLimiter::JoinLimiter() { RAND_bytes(reinterpret_cast<unsigned char*>(&key_), sizeof key_); }

JoinLimiter::~JoinLimiter() { delete[] buckets_.load(std::memory_order_relaxed); }

size_t JoinLimiter::bytes() const {
  return buckets_.load(std::memory_order_relaxed) == nullptr
             ? 0
             : kTables * sizeof(uint32_t) * static_cast<size_t>(kBlocks) * kBlock;
}

void JoinLimiter::claim(Bucket& t, int64_t b) {
  if (t.index.load(std::memory_order_relaxed) == b) return;
  for (auto& block : t.blocks) {
    for (auto& c : block.c) c.store(0, std::memory_order_relaxed);
  }
  t.index.store(b, std::memory_order_release);
}

JoinLimiter::Bucket& JoinLimiter::table(int64_t b) {
  Bucket* all = buckets_.load(std::memory_order_acquire);
  if (all == nullptr || all[slot_of(b)].index.load(std::memory_order_acquire) != b) {
    std::lock_guard lock(turn_);
    all = buckets_.load(std::memory_order_relaxed);
    if (all == nullptr) {
      all = new Bucket[kTables];
      buckets_.store(all, std::memory_order_release);
    }
    claim(all[slot_of(b)], b);
    // The next bucket's table held bucket b - 5, which no window reaches from b on: clear it
    // now, while nobody counts in it, so that no join ever reads a table being cleared.
    claim(all[slot_of(b + 1)], b + 1);
  }
  return all[slot_of(b)];
}

bool JoinLimiter::allow(std::string_view room, std::string_view address, uint32_t per_minute,
                        int64_t now_ms, uint32_t* retry_after_s) {
  const int64_t b = now_ms / kBucketMs;
  const uint64_t h = hash_bytes(address, hash_bytes(room, key_) ^ 0x9e3779b97f4a7c15ULL);
  // The key's block of 16 counters (one cache line), and 4 different counters in it.
  const size_t block = static_cast<size_t>(h % kBlocks);
  std::array<size_t, kRows> at{};
  uint64_t bits = mix(h);
  for (int r = 0; r < kRows; ++r) {
    size_t slot = bits & (kBlock - 1);
    bits >>= 4;
    auto taken = [&](size_t s) {
      return std::find(at.begin(), at.begin() + r, s) != at.begin() + r;
    };
    while (taken(slot)) slot = (slot + 1) & (kBlock - 1);  // at most 3 are: one is free
    at[r] = slot;
  }
  Bucket& now = table(b);
  const Bucket* all = buckets_.load(std::memory_order_relaxed);
  auto least = [&](const Bucket& t) {
    uint32_t v = UINT32_MAX;
    for (size_t i : at) v = std::min(v, t.blocks[block].c[i].load(std::memory_order_relaxed));
    return v;
  };
  // counts[k]: this address's joins in bucket b - k (the oldest last).
  std::array<uint64_t, kWindowBuckets> counts{};
  uint64_t total = 0;
  for (int k = 0; k < kWindowBuckets; ++k) {
    const Bucket& t = k == 0 ? now : all[slot_of(b - k)];
    if (t.index.load(std::memory_order_acquire) == b - k) counts[k] = least(t);
    total += counts[k];
  }
  if (total + 1 > per_minute) {
    // The oldest bucket leaves the window at the next boundary, the next oldest 15 s later:
    // the first boundary after which what is left, and one more, fit.
    uint64_t left = total;
    int64_t at_ms = 0;
    for (int k = kWindowBuckets - 1; k >= 0; --k) {
      left -= counts[k];
      at_ms = (b + kWindowBuckets - k) * kBucketMs;
      if (left + 1 <= per_minute) break;
    }
    *retry_after_s = static_cast<uint32_t>(std::max<int64_t>(1, (at_ms - now_ms + 999) / 1000));
    return false;
  }
  // Conservative update: raise each counter only as far as the new smallest needs.
  const uint32_t mine = static_cast<uint32_t>(counts[0]);
  for (size_t i : at) {
    std::atomic<uint32_t>& cell = now.blocks[block].c[i];
    uint32_t v = cell.load(std::memory_order_relaxed);
    while (v < mine + 1 && !cell.compare_exchange_weak(v, mine + 1, std::memory_order_relaxed)) {
    }
  }
  return true;
}

}  // namespace anteroom
