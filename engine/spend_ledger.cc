#include "engine/spend_ledger.h"

#include <iterator>

namespace anteroom {

bool SpendLedger::spend(std::string_view key, uint32_t limit, int64_t ttl_ms, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (now_ms - pruned_at_ms_ >= 1000 || counts_.size() >= kMaxKeys) prune(now_ms);
  auto it = counts_.find(std::string(key));
  if (it == counts_.end()) {
    if (counts_.size() >= kMaxKeys) return false;
    it = counts_.emplace(std::string(key), Count{0, now_ms + ttl_ms}).first;
  }
  if (it->second.uses >= limit) return false;
  ++it->second.uses;
  return true;
}

void SpendLedger::prune(int64_t now_ms) {
  pruned_at_ms_ = now_ms;
  for (auto it = counts_.begin(); it != counts_.end();) {
    it = it->second.until_ms <= now_ms ? counts_.erase(it) : std::next(it);
  }
}

}  // namespace anteroom
