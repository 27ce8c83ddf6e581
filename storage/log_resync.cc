#include "storage/log_resync.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "storage/log_format.h"

namespace anteroom::logfmt {
namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // CRC32C, reflected
constexpr uint32_t kOne = 0x80000000;   // the polynomial 1, reflected (x^0 in bit 31)
constexpr size_t kWindow = size_t{1} << 20;
constexpr size_t kLow = 4096;  // x^(8n) = low[n % kLow] * high[n / kLow]

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

uint32_t load32(const char* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, 4);
  return v;
}

// a * b modulo the polynomial, both reflected: for each power x^k in a, add b * x^k.
uint32_t multiply(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t bit = kOne; bit != 0; bit >>= 1) {
    if (a & bit) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;  // b * x
  }
  return product;
}

// x^(8n) for every n up to kMaxPayload + 1, from two tables.
class Powers {
 public:
  Powers() : low_(kLow), high_((kMaxPayload + 1) / kLow + 2) {
    uint32_t x8 = kOne;
    for (int i = 0; i < 8; ++i) x8 = (x8 & 1) ? (x8 >> 1) ^ kPoly : x8 >> 1;
    low_[0] = kOne;
    for (size_t i = 1; i < kLow; ++i) low_[i] = multiply(low_[i - 1], x8);
    const uint32_t step = multiply(low_[kLow - 1], x8);  // x^(8 kLow)
    high_[0] = kOne;
    for (size_t i = 1; i < high_.size(); ++i) high_[i] = multiply(high_[i - 1], step);
  }
  uint32_t x8n(size_t n) const { return multiply(low_[n % kLow], high_[n / kLow]); }

 private:
  std::vector<uint32_t> low_, high_;
};

struct Candidate {
  size_t end;         // where the record would end: its checked bytes are [start + 8, end)
  size_t start;       // its header's offset
  uint32_t expected;  // the CRC its header says
};

}  // namespace

bool valid_record_after(std::string_view data, size_t from, uint64_t* work) {
  if (work != nullptr) *work = 0;
  const Powers powers;
  std::vector<Candidate> window;
  std::vector<uint32_t> at_start;  // P at each candidate's first checked byte
  for (size_t w0 = from; w0 + kHeaderSize <= data.size(); w0 += kWindow) {
    const size_t w1 = std::min(w0 + kWindow, data.size() - kHeaderSize + 1);
    window.clear();
    for (size_t i = w0; i < w1; ++i) {
      const char* h = data.data() + i;
      const uint32_t len = load32(h + 4);
      if (h[8] == 0 || len > kMaxPayload || kHeaderSize + len > data.size() - i) continue;
      window.push_back({i + kHeaderSize + len, i, unmask_crc(load32(h))});
    }
    if (window.empty()) continue;
    std::sort(window.begin(), window.end(),
              [](const Candidate& a, const Candidate& b) { return a.end < b.end; });
    // One sweep from the window's first checked byte to the last candidate's end.
    const size_t s = w0 + 8;
    at_start.assign(w1 - w0, 0);
    uint32_t p = 0;
    size_t next = 0;
    const size_t last = window.back().end;
    for (size_t x = s; x <= last; ++x) {
      if (x - s < at_start.size()) at_start[x - s] = p;
      for (; next < window.size() && window[next].end == x; ++next) {
        const Candidate& c = window[next];
        const size_t n = c.end - (c.start + 8);
        const uint32_t crc = ~(p ^ multiply(powers.x8n(n), at_start[c.start - w0] ^ 0xFFFFFFFFu));
        if (crc == c.expected) {
          if (work != nullptr) *work += x - s;
          return true;
        }
      }
      if (x < last) p = kTable[(p ^ static_cast<uint8_t>(data[x])) & 0xff] ^ (p >> 8);
    }
    if (work != nullptr) *work += last - s;
  }
  return false;
}

}  // namespace anteroom::logfmt
