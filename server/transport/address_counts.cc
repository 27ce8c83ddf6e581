#include "server/transport/address_counts.h"

namespace anteroom {

bool AddressCounts::try_add(const AddressKey& a, uint32_t limit) {
  Stripe& s = stripe(a);
  std::lock_guard lock(s.mu);
  uint32_t& n = s.open[a];
  if (n >= limit) return false;  // n > 0 here: the entry was there already
  ++n;
  return true;
}

void AddressCounts::remove(const AddressKey& a) {
  Stripe& s = stripe(a);
  std::lock_guard lock(s.mu);
  auto it = s.open.find(a);
  if (it == s.open.end()) return;
  if (--it->second == 0) s.open.erase(it);
}

uint32_t AddressCounts::count(const AddressKey& a) {
  Stripe& s = stripe(a);
  std::lock_guard lock(s.mu);
  auto it = s.open.find(a);
  return it == s.open.end() ? 0 : it->second;
}

}  // namespace anteroom
