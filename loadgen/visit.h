// One virtual visitor, as a coroutine: arrive on time, join, wait the way its transport
// waits (poll honouring poll_after_ms, an SSE stream, or seed 000's WebSocket), get
// admitted, use the admission, stay, leave; or give up while waiting, as some people do.
// Also the closed-model loop (one busy connection) and the direct visit to the origin.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "loadgen/config.h"
#include "loadgen/conn.h"
#include "loadgen/recorder.h"

namespace anteroom::loadgen {

inline constexpr int kMaxProcesses = 64;

// Live figures of one process, in memory shared with the coordinator (the progress line,
// the gauges over time, and the hold scenario's hand-over).
struct alignas(64) Live {
  std::atomic<int64_t> open{0};     // open connections
  std::atomic<int64_t> waiting{0};  // visitors waiting
  std::atomic<int64_t> active{0};   // visitors admitted and not gone
  std::atomic<int64_t> joined{0};
  std::atomic<int64_t> admitted{0};
  std::atomic<int64_t> finished{0};  // visits over, however they ended
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> requests{0};  // answered (the progress line's req/s)
  std::atomic<int64_t> held{0};      // hold: sessions open with their first frame read
  std::atomic<int64_t> changed{0};   // hold: sessions that received the change
};

struct Control {
  std::atomic<int64_t> t0{0};          // when visitor 0 is due (now_us)
  std::atomic<int64_t> trigger_us{0};  // hold: when the change was made
  std::atomic<int> stop{0};            // the coordinator ends the phase
  // hold: the workers' resident memory together, read by the coordinator every tick.
  std::atomic<uint64_t> workers_rss{0};
  Live live[kMaxProcesses];
};

enum class Mode { kVisit, kDirect, kHold, kClosed, kSite };

// Read-only for the whole phase.
struct Plan {
  const Config* cfg = nullptr;
  Mode mode = Mode::kVisit;
  bool origin_after_admission = false;  // protect, queued: use the admission at the origin
  tcp::endpoint target;                 // the first of `targets`
  std::vector<tcp::endpoint> targets;   // visitors spread over them (a cluster's nodes)
  tcp::endpoint origin;
  std::string host;  // Host header
  std::string room;
  uint64_t visitors = 0;
  int processes = 1;
  int threads = 1;
  std::vector<net::ip::address> sources;  // unspecified: let the kernel choose
};

// What a visitor coroutine needs from its thread.
struct ThreadCtx {
  net::io_context& io;
  Watchdog& watchdog;
  Recorder& rec;
  Live& live;
  Control& control;
  const Plan& plan;
  int process = 0;
  int64_t running = 0;  // coroutines not yet finished on this thread

  // A request answered: recorded, and counted live.
  void request(RequestKind kind, int64_t due_us, int64_t done_us) {
    rec.request(kind, due_us, done_us);
    live.requests.fetch_add(1, std::memory_order_relaxed);
  }
};

// Visitor `index` (global over processes), whose record is `r`.
net::awaitable<void> visit(ThreadCtx& t, uint64_t index, VisitorRecord& r);
// Closed model: one connection repeating the request until `end_us`.
net::awaitable<void> closed_loop(ThreadCtx& t, uint64_t index, int64_t end_us);

// The status object or WebSocket message fields a visitor looks at.
struct Message {
  std::string type;    // WebSocket: ALLOWED, QUEUE, QUEUE_STATUS, VISITOR_COUNT, ERROR
  std::string status;  // WAITING, ALLOWED, ACTIVE, LEFT, EXPIRED
  std::string token;
  std::string ticket;
  int64_t position = -1;       // -1 when absent or null
  bool position_null = false;  // "position": null (a pre-queue, or a random room)
  bool opens_at = false;       // "opens_at" given: the pre-queue's start
  uint64_t ref = 0;            // "ref", 16 hex digits; 0: absent or malformed
  uint64_t seq = kNoSeq;
  int64_t poll_after_ms = -1;
  bool reply = false;  // a WebSocket answer to CHECK_QUEUE_STATUS
};
// A message of seed 000's protocol: {"type":TYPE,"userId":USER}.
std::string seed_ws_message(const char* type, const std::string& user);

// False if `text` is not a JSON object.
bool parse_message(std::string_view text, Message* out);

}  // namespace anteroom::loadgen
