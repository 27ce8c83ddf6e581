// Open connections per client address, for --max-connections-per-address. Entries exist
// only while an address has a connection open, so memory follows the open connections.
//
// Thread safety: every method from any thread; 16 stripes, each a map under its own mutex.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace anteroom {

// An IPv4 or IPv6 address as 16 bytes (IPv4 mapped into IPv6).
using AddressKey = std::array<uint8_t, 16>;

struct AddressKeyHash {
  size_t operator()(const AddressKey& k) const {
    return std::hash<std::string_view>{}({reinterpret_cast<const char*>(k.data()), k.size()});
  }
};

class AddressCounts {
 public:
  // Counts one more connection from `a` unless it already has `limit`; false then.
  bool try_add(const AddressKey& a, uint32_t limit);
  void remove(const AddressKey& a);
  uint32_t count(const AddressKey& a);

 private:
  struct Stripe {
    std::mutex mu;
    std::unordered_map<AddressKey, uint32_t, AddressKeyHash> open;  // guarded by mu
  };
  Stripe& stripe(const AddressKey& a) { return stripes_[AddressKeyHash{}(a) % stripes_.size()]; }
  std::array<Stripe, 16> stripes_;
};

}  // namespace anteroom
