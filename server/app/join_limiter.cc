#include "server/app/join_limiter.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace anteroom {

struct JoinLimiter::Minute {
  std::atomic<int64_t> index{-1};
  struct alignas(64) Block {  // one cache line
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

}  // namespace

// Seconds until one more join fits, if none come meanwhile: this minute's `count` stays while
// last minute's `before` slides out; once this minute is over, `count` is the one sliding.
uint32_t JoinLimiter::wait_s(uint32_t count, double before, uint32_t per_minute, double into) {
  const double room = static_cast<double>(per_minute) - 1.0;  // what the others may use
  double at = 0;                                              // minutes from the start of this one
  if (count <= room) {
    at = before <= 0 ? into : std::max(into, 1.0 - (room - count) / before);
  } else {
    at = 1.0 + std::max(0.0, 1.0 - room / static_cast<double>(count));
  }
  return static_cast<uint32_t>(std::max(1.0, std::ceil((at - into) * 60.0)));
}

JoinLimiter::JoinLimiter() { RAND_bytes(reinterpret_cast<unsigned char*>(&key_), sizeof key_); }

JoinLimiter::~JoinLimiter() { delete[] minutes_.load(std::memory_order_relaxed); }

size_t JoinLimiter::bytes() const {
  return minutes_.load(std::memory_order_relaxed) == nullptr
             ? 0
             : 2 * sizeof(uint32_t) * static_cast<size_t>(kBlocks) * kBlock;
}

JoinLimiter::Minute& JoinLimiter::table(int64_t m) {
  Minute* both = minutes_.load(std::memory_order_acquire);
  if (both == nullptr || both[m & 1].index.load(std::memory_order_acquire) != m) {
    std::lock_guard lock(turn_);
    both = minutes_.load(std::memory_order_relaxed);
    if (both == nullptr) {
      both = new Minute[2];
      minutes_.store(both, std::memory_order_release);
    }
    Minute& t = both[m & 1];
    if (t.index.load(std::memory_order_relaxed) != m) {
      for (auto& b : t.blocks) {
        for (auto& c : b.c) c.store(0, std::memory_order_relaxed);
      }
      t.index.store(m, std::memory_order_release);
    }
  }
  return both[m & 1];
}

bool JoinLimiter::allow(std::string_view room, std::string_view address, uint32_t per_minute,
                        int64_t now_ms, uint32_t* retry_after_s) {
  const int64_t m = now_ms / 60'000;
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
  Minute& now = table(m);
  const Minute& before = minutes_.load(std::memory_order_relaxed)[(m - 1) & 1];
  auto least = [&](const Minute& t) {
    uint32_t v = UINT32_MAX;
    for (size_t i : at) v = std::min(v, t.blocks[block].c[i].load(std::memory_order_relaxed));
    return v;
  };
  const double into = static_cast<double>(now_ms % 60'000) / 60'000.0;
  const double last_minute = before.index.load(std::memory_order_acquire) == m - 1
                                 ? static_cast<double>(least(before))
                                 : 0.0;
  const uint32_t count = least(now);
  if (static_cast<double>(count) + last_minute * (1.0 - into) + 1 > per_minute) {
    *retry_after_s = wait_s(count, last_minute, per_minute, into);
    return false;
  }
  // Conservative update: raise each counter only as far as the new smallest needs.
  for (size_t i : at) {
    std::atomic<uint32_t>& cell = now.blocks[block].c[i];
    uint32_t v = cell.load(std::memory_order_relaxed);
    while (v < count + 1 && !cell.compare_exchange_weak(v, count + 1, std::memory_order_relaxed)) {
    }
  }
  return true;
}

}  // namespace anteroom
