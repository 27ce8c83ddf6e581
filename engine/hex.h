// Lowercase hex of bytes: the one hex encoder of the tree (the engine's draw, the server's
// key hashes and generated secrets, a cluster node's script digest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace anteroom {

inline std::string to_hex(const uint8_t* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = kDigits[data[i] >> 4];
    s[2 * i + 1] = kDigits[data[i] & 15];
  }
  return s;
}

}  // namespace anteroom
