// Joins per client address per minute (room field ip_joins_per_minute), in memory that does
// not grow with the number of addresses: a count-min sketch per 15-second bucket.
//
// The bound is exact: no 60-second window, wherever it starts, holds more joins of one
// address than its limit. A join at time t is let in only if the joins counted in the
// buckets that overlap [t - 60 s, t] (the current one and the four before it: 60 to 75 s
// back), plus this one, fit the limit; every join of any 60 s window ending at its last join
// was counted then. The price: an address that used its whole limit gets it back up to 15 s
// later than a window of exactly 60 s would give it.
//
// Each bucket has a table of 2^20 counters (4 MiB; six are kept, 24 MiB, allocated the first
// time any room limits joins), in blocks of 16 that share a cache line. A key (room R,
// address A, hashed with a random secret) has 4 different counters in one block; a join
// raises them to one more than the smallest of them ("conservative update"), and A's count
// in that bucket is that smallest. A count can only be too high (other keys in the same
// block landing on all four of A's counters), never too low: at T joins a bucket a block
// holds about T / 2^16 other keys (4 at a million a minute), and A is overcounted only where
// every one of its four counters is taken. So an address may rarely be refused a few joins
// before its limit; it is never let past it. tests/server/join_limiter_test.cc: 100,000
// addresses under a limit of 10, nobody refused early; random joins never more than the
// limit in any 60 s window.
//
// Thread safety: allow() from any thread; counters are relaxed atomics (two joins of one
// address at the same instant may both pass the last place), and turning to a new bucket
// takes a mutex, four times a minute. A table is cleared for reuse one bucket before any
// join counts in it, so no join reads a table being cleared.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

namespace anteroom {

class JoinLimiter {
 public:
  static constexpr int kRows = 4;         // counters per key
  static constexpr uint32_t kBlock = 16;  // counters per block: one 64-byte cache line
  static constexpr uint32_t kBlocks = 1u << 16;
  static constexpr int64_t kBucketMs = 15'000;
  static constexpr int kWindowBuckets = 5;  // the current one and the four before
  static constexpr int kTables = 6;         // those, and the next one, cleared ahead

  JoinLimiter();
  ~JoinLimiter();
  JoinLimiter(const JoinLimiter&) = delete;
  JoinLimiter& operator=(const JoinLimiter&) = delete;
  // Whether one more join to `room` from `address` (any bytes: the client's address) keeps
  // every 60 s window within `per_minute` at `now_ms`; counted if so. Else *retry_after_s
  // says when to come back (the seconds until one more fits, if none come meanwhile).
  bool allow(std::string_view room, std::string_view address, uint32_t per_minute, int64_t now_ms,
             uint32_t* retry_after_s);
  size_t bytes() const;  // allocated so far

 private:
  struct Bucket;
  // The table of bucket `b`, claimed (and cleared) if it held an older one; the next
  // bucket's table is made ready too.
  Bucket& table(int64_t b);
  void claim(Bucket& t, int64_t b);

  std::atomic<Bucket*> buckets_{nullptr};  // kTables of them; made on first use
  std::mutex turn_;
  uint64_t key_ = 0;  // random: hashes an attacker cannot aim at one another
};

}  // namespace anteroom
