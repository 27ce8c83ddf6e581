// Joins per client address per minute (room field ip_joins_per_minute, SPEC section 9), in
// memory that does not grow with the number of addresses: a count-min sketch per minute.
//
// Each minute has a table of 2^22 counters (16 MiB; two minutes are kept, allocated the
// first time any room limits joins), in blocks of 16 that share a cache line. A key (room R,
// address A, hashed with a random secret) has 4 different counters in one block; a join
// raises them to one more than the smallest of them ("conservative update"), and A's count is
// that smallest. One block per key keeps a join to two cache misses (this minute and the
// last) instead of eight. A count can only be too high (other keys in the same block landing
// on all four of A's counters), never too low: at T joins a minute a block holds about
// T / 2^18 other keys (4 at a million a minute), and A is overcounted only where every one of
// its four counters is taken. So an address may rarely be refused a few joins before its
// limit; it is never let past it. tests/server/join_limiter_test.cc: 100,000 addresses under
// a limit of 10, nobody refused early.
//
// The window slides: the count is this minute's plus the part of last minute's that the
// window still covers (as if last minute's joins were spread evenly over it).
//
// Thread safety: allow() from any thread; counters are relaxed atomics (two joins of one
// address at the same instant may both pass the last place), and turning to a new minute
// takes a mutex, once a minute.
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
  static constexpr uint32_t kBlocks = 1u << 18;

  JoinLimiter();
  ~JoinLimiter();
  JoinLimiter(const JoinLimiter&) = delete;
  JoinLimiter& operator=(const JoinLimiter&) = delete;
  // Whether one more join to `room` from `address` (any bytes: the client's address) keeps
  // it within `per_minute` at `now_ms`; counted if so. Else *retry_after_s says when to come
  // back (the seconds until the window has room).
  bool allow(std::string_view room, std::string_view address, uint32_t per_minute, int64_t now_ms,
             uint32_t* retry_after_s);
  size_t bytes() const;  // allocated so far

 private:
  struct Minute;
  static uint32_t wait_s(uint32_t count, double before, uint32_t per_minute, double into);
  // The table of minute `m`, cleared and claimed if it held an older one.
  Minute& table(int64_t m);

  std::atomic<Minute*> minutes_{nullptr};  // two: even and odd minutes; made on first use
  std::mutex turn_;
  uint64_t key_ = 0;  // random: hashes an attacker cannot aim at one another
};

}  // namespace anteroom
