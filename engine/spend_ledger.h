// Uses of one-time things counted against a limit for a while: a link that sets a cookie
// once (the gate's /v1/enter), a pass good for n visitors. An engine counts them in memory
// (RoomService::spend); a cluster node counts them in Redis, once for the whole cluster.
//
// Thread safety: every method from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace anteroom {

class SpendLedger {
 public:
  // Counts one use of `key` at `now_ms`; true if it is within `limit` uses. The count is
  // forgotten `ttl_ms` after its first use. At most kMaxKeys keys are kept; none is dropped
  // before its time, so past that a new key is refused (false).
  bool spend(std::string_view key, uint32_t limit, int64_t ttl_ms, int64_t now_ms);
  static constexpr size_t kMaxKeys = 1'000'000;

 private:
  struct Count {
    uint32_t uses = 0;
    int64_t until_ms = 0;
  };
  void prune(int64_t now_ms);  // caller holds mu_

  std::mutex mu_;
  std::unordered_map<std::string, Count> counts_;
  int64_t pruned_at_ms_ = 0;
};

}  // namespace anteroom
