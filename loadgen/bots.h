// The bots of the `bots` scenario: a few addresses (127.3.0.1, ...) hammering joins as fast
// as they can, each over several keep-alive connections, in a process of their own while the
// humans' phase runs. Some addresses solve the proof of work honestly (and try each
// connection's first accepted solution a second time), some send a nonce certain to be wrong,
// some send no proof at all. Their answers are counted in memory shared with the coordinator.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string_view>

#include "loadgen/config.h"
#include "loadgen/visit.h"

namespace anteroom::loadgen {

enum class BotKind : uint8_t {
  kSolver,  // fetches a challenge and solves it
  kForger,  // fetches a challenge and sends a wrong nonce
  kBare,    // sends no proof
};
inline constexpr int kBotKinds = 3;
inline constexpr uint32_t kMaxBots = 250;
const char* bot_kind_name(BotKind kind);  // "solving", "wrong nonce", "no proof"

// Bot address k of n: the first round(n * solve_share) solve, the others alternate between a
// wrong nonce and no proof.
BotKind bot_kind(uint32_t k, uint32_t n, double solve_share);
net::ip::address bot_address(uint32_t k);    // 127.3.0.(k + 1)
net::ip::address human_address(uint64_t i);  // 127.1.(i / 250).(i % 250 + 1)

// One kind's join answers.
struct BotTally {
  std::atomic<uint64_t> sent{0};          // joins sent
  std::atomic<uint64_t> created{0};       // 201 (or 200): a ticket
  std::atomic<uint64_t> limited{0};       // 429 rate_limited
  std::atomic<uint64_t> pow_required{0};  // 403 pow_required
  std::atomic<uint64_t> pow_invalid{0};   // 403 pow_invalid
  std::atomic<uint64_t> other{0};         // any other answer
  std::atomic<uint64_t> failed{0};        // no answer (connect, timeout, closed)
};

// In memory shared between the coordinator and the bots' process.
struct BotShared {
  std::atomic<int> stop{0};  // the coordinator ends the bots
  std::atomic<int64_t> started_us{0};
  std::atomic<int64_t> ended_us{0};
  BotTally kinds[kBotKinds];
  std::atomic<uint64_t> challenges{0};        // challenges fetched
  std::atomic<uint64_t> solved{0};            // solutions found
  std::atomic<uint64_t> hashes{0};            // SHA-256 computed solving
  std::atomic<uint64_t> replays{0};           // accepted solutions sent a second time
  std::atomic<uint64_t> replays_accepted{0};  // ... and accepted again (must be 0)
  std::atomic<uint64_t> replays_invalid{0};   // ... and answered 403 pow_invalid
  std::atomic<uint64_t> tickets_by_address[kMaxBots] = {};
};

// Counts one join answer into `t`.
void tally_answer(int status, std::string_view body, BotTally* t);

// Forks the bots' process: cfg.bots addresses, cfg.bot_connections connections each, over
// one thread for the bots that do not solve and cfg.bot_threads for those that do, against
// plan.target's room plan.room, until shared->stop is set or max_seconds have passed. The pid, or
// -1.
pid_t start_bots(const Config& cfg, const Plan& plan, BotShared* shared, double max_seconds);
// Sets stop and waits for the process. False if it did not exit cleanly.
bool stop_bots(pid_t pid, BotShared* shared);

}  // namespace anteroom::loadgen
