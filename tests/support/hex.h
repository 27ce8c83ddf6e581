// Lowercase hex of bytes, for tests that recompute digests on their own (not with the code
// under test).
#pragma once

#include <cstddef>
#include <string>

namespace anteroom::testing {

inline std::string hex_of(const unsigned char* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}

}  // namespace anteroom::testing
