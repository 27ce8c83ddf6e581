#include "server/transport/fail.h"

#include <atomic>
#include <chrono>
#include <cstdio>

#include "server/transport/beast.h"

namespace anteroom {

bool ordinary_end(const boost::system::error_code& ec) {
  return ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::operation_aborted || ec == net::error::broken_pipe ||
         ec == net::error::bad_descriptor || ec == net::error::not_connected ||
         ec == net::error::timed_out || ec == beast::error::timeout ||
         ec == http::error::end_of_stream || ec == websocket::error::closed;
}

void fail(const boost::system::error_code& ec, const char* what) {
  if (!ec || ordinary_end(ec)) return;
  // A budget of lines per second: relaxed counters, a rough limit is all that is needed.
  constexpr int64_t kLinesPerSecond = 5;
  static std::atomic<int64_t> second{0}, lines{0}, dropped{0};
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (second.exchange(now, std::memory_order_relaxed) != now)
    lines.store(0, std::memory_order_relaxed);
  if (lines.fetch_add(1, std::memory_order_relaxed) >= kLinesPerSecond) {
    dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const int64_t skipped = dropped.exchange(0, std::memory_order_relaxed);
  if (skipped != 0) {
    std::fprintf(stderr, "anteroom: %s: %s (and %lld more errors not shown)\n", what,
                 ec.message().c_str(), static_cast<long long>(skipped));
  } else {
    std::fprintf(stderr, "anteroom: %s: %s\n", what, ec.message().c_str());
  }
}

}  // namespace anteroom
