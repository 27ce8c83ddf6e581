// Telling a torn tail from damage in linear time (storage/log_resync.h): the same answer as
// checking every offset afresh, on planted records and random damage; and on a log crafted so
// that every fourth offset looks like a record reaching to the end (quadratic for the check at
// every offset: 10 s for 128 KiB before), and on 16 MiB of random bytes, the CRC work stays a
// small multiple of the size.
#include "storage/log_resync.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "storage/log_format.h"

namespace anteroom::logfmt {
namespace {

// The check it replaced: a whole valid record at any offset, each CRC computed afresh; *cost
// gets the bytes that costs.
bool every_offset(std::string_view data, size_t from, uint64_t* cost) {
  *cost = 0;
  for (size_t i = from; i + kHeaderSize <= data.size(); ++i) {
    const char* h = data.data() + i;
    uint32_t len = 0, masked = 0;
    std::memcpy(&masked, h, 4);
    std::memcpy(&len, h + 4, 4);
    const auto type = static_cast<uint8_t>(h[8]);
    if (type == 0 || len > kMaxPayload || kHeaderSize + len > data.size() - i) continue;
    *cost += len + 1;
    if (unmask_crc(masked) == crc32c(h + kHeaderSize, len, crc32c(&type, 1))) return true;
  }
  return false;
}

TEST(LogResync, AgreesWithCheckingEveryOffset) {
  std::mt19937_64 rng(7);
  int found = 0;
  for (int round = 0; round < 400; ++round) {
    std::string data(rng() % 600 + 10, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    // Small lengths, so that random headers are often plausible.
    for (size_t i = 4; i + 4 <= data.size(); i += 7) data[i + 1] = data[i + 2] = data[i + 3] = 0;
    size_t from = rng() % data.size();
    // Half the rounds hide a real record (of any length, 0 to 200 bytes) after `from`.
    if (round % 2 == 0) {
      std::string rec;
      std::string payload(rng() % 200, 'p');
      for (char& c : payload) c = static_cast<char>(rng());
      append_record(&rec, static_cast<uint8_t>(rng() % 255 + 1), payload);
      if (rec.size() < data.size()) {
        const size_t at = rng() % (data.size() - rec.size());
        data.replace(at, rec.size(), rec);
        from = at == 0 ? 0 : rng() % at;
      }
    }
    uint64_t cost = 0;
    const bool want = every_offset(data, from, &cost);
    found += want;
    EXPECT_EQ(valid_record_after(data, from), want) << "round " << round << ", from " << from;
  }
  EXPECT_GT(found, 50) << "both answers are tried";
  EXPECT_LT(found, 350) << "both answers are tried";
}

TEST(LogResync, ACraftedLogCostsLinearWork) {
  const size_t size = 128 * 1024;
  std::string data(size, '\x01');
  // Every fourth offset: a nonzero type and a length that runs exactly to the end, none valid.
  for (size_t i = 0; i + kHeaderSize <= size; i += 4) {
    const uint32_t len = static_cast<uint32_t>(size - i - kHeaderSize);
    std::memcpy(&data[i + 4], &len, 4);
  }
  // What checking every offset afresh would put through the CRC (the lengths, not run).
  uint64_t naive = 0, work = 0;
  for (size_t i = 1; i + kHeaderSize <= size; ++i) {
    uint32_t len = 0;
    std::memcpy(&len, &data[i + 4], 4);
    if (len <= kMaxPayload && kHeaderSize + len <= size - i) naive += len + 1;
  }
  EXPECT_GT(naive, uint64_t{1000} * size) << "the input is as hostile as the finding's";
  EXPECT_FALSE(valid_record_after(data, 1, &work));
  EXPECT_LE(work, uint64_t{2} * size);
}

TEST(LogResync, SixteenMegabytesOfNoiseCostLinearWork) {
  const size_t size = 16u << 20;
  std::string data(size, '\0');
  std::mt19937_64 rng(11);
  for (size_t i = 0; i + 8 <= size; i += 8) {
    const uint64_t v = rng();
    std::memcpy(&data[i], &v, 8);
  }
  uint64_t work = 0;
  const bool found = valid_record_after(data, 1, &work);
  EXPECT_LE(work, uint64_t{17} * size) << "found: " << found;
}

}  // namespace
}  // namespace anteroom::logfmt
