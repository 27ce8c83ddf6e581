#include "engine/user_index.h"

#include <functional>

namespace anteroom {

UserIndex::~UserIndex() { delete[] stripes_.load(std::memory_order_acquire); }

UserIndex::Stripe& UserIndex::stripe(std::string_view user) {
  Stripe* s = stripes_.load(std::memory_order_acquire);
  if (s == nullptr) {
    auto* fresh = new Stripe[kStripes];
    if (stripes_.compare_exchange_strong(s, fresh, std::memory_order_acq_rel)) {
      s = fresh;
    } else {
      delete[] fresh;  // another join installed them first; `s` holds theirs
    }
  }
  return s[std::hash<std::string_view>{}(user) % kStripes];
}

UserIndex::Lock::Lock(Stripe& stripe, std::string_view user)
    : stripe_(stripe), lock_(stripe.mu), user_(user) {
  auto it = stripe_.map.find(user);
  if (it != stripe_.map.end()) seq_ = it->second;
}

void UserIndex::Lock::set(std::string_view key, uint64_t seq) {
  stripe_.map.erase(user_);
  stripe_.map.emplace(key, seq);
  seq_ = seq;
}

void UserIndex::erase_if(std::string_view user, uint64_t seq) {
  Stripe& s = stripe(user);
  std::lock_guard lock(s.mu);
  auto it = s.map.find(user);
  if (it != s.map.end() && it->second == seq) s.map.erase(it);
}

size_t UserIndex::size() const {
  Stripe* s = stripes_.load(std::memory_order_acquire);
  if (s == nullptr) return 0;
  size_t n = 0;
  for (size_t i = 0; i < kStripes; ++i) {
    std::lock_guard lock(s[i].mu);
    n += s[i].map.size();
  }
  return n;
}

size_t UserIndex::bytes_allocated() const {
  Stripe* s = stripes_.load(std::memory_order_acquire);
  if (s == nullptr) return 0;
  size_t bytes = kStripes * sizeof(Stripe);
  for (size_t i = 0; i < kStripes; ++i) {
    std::lock_guard lock(s[i].mu);
    // A node (next pointer, key, value, cached hash) and its bucket pointer.
    bytes += s[i].map.size() * (sizeof(void*) * 3 + sizeof(std::string_view) + 8) +
             s[i].map.bucket_count() * sizeof(void*);
  }
  return bytes;
}

}  // namespace anteroom
