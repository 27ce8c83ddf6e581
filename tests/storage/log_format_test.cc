// The log's record framing, in the spirit of LevelDB's log tests: what a torn write leaves
// is a clean cut; damage with good data after it is corruption.
#include "storage/log_format.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace anteroom::logfmt {
namespace {

std::string payload_of(int i) {
  return std::string(static_cast<size_t>(i * 37 % 5000), static_cast<char>('a' + i % 26));
}

std::string log_of(int n, std::vector<uint64_t>* offsets = nullptr) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    if (offsets != nullptr) offsets->push_back(out.size());
    append_record(&out, static_cast<uint8_t>(1 + i % 7), payload_of(i));
  }
  return out;
}

// Reads everything; returns how many records came out.
int read_all(Reader* reader) {
  int n = 0;
  Record r;
  while (reader->next(&r)) {
    EXPECT_EQ(r.payload, payload_of(n)) << "record " << n;
    EXPECT_EQ(r.type, 1 + n % 7);
    ++n;
  }
  return n;
}

TEST(LogFormat, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  EXPECT_EQ(unmask_crc(mask_crc(0xE3069283u)), 0xE3069283u);
  EXPECT_NE(mask_crc(0xE3069283u), 0xE3069283u);
}

TEST(LogFormat, RoundTripsRecordsOfManySizes) {
  std::string log = log_of(200);
  Reader reader(log);
  EXPECT_EQ(read_all(&reader), 200);
  EXPECT_EQ(reader.end(), Reader::End::kClean);
  EXPECT_EQ(reader.valid_bytes(), log.size());
}

TEST(LogFormat, EmptyLogIsClean) {
  Reader reader("");
  Record r;
  EXPECT_FALSE(reader.next(&r));
  EXPECT_EQ(reader.end(), Reader::End::kClean);
}

TEST(LogFormat, TruncatedTrailingRecordIsIgnored) {
  std::vector<uint64_t> offsets;
  std::string log = log_of(10, &offsets);
  // Cut at every byte of the last record (header and payload): nine records survive.
  for (uint64_t cut = offsets[9] + 1; cut < log.size(); ++cut) {
    std::string torn = log.substr(0, cut);
    Reader reader(torn);
    ASSERT_EQ(read_all(&reader), 9) << "cut at " << cut;
    EXPECT_EQ(reader.end(), Reader::End::kTornTail) << "cut at " << cut;
    EXPECT_EQ(reader.valid_bytes(), offsets[9]);
  }
}

TEST(LogFormat, ChecksumMismatchInTheMiddleIsCorruption) {
  std::vector<uint64_t> offsets;
  std::string log = log_of(10, &offsets);
  log[offsets[4] + kHeaderSize + 1] ^= 0x40;  // one bit in record 4's payload
  Reader reader(log);
  EXPECT_EQ(read_all(&reader), 4);
  EXPECT_EQ(reader.end(), Reader::End::kCorrupt);
  EXPECT_EQ(reader.valid_bytes(), offsets[4]);
  EXPECT_NE(reader.problem().find("offset " + std::to_string(offsets[4])), std::string::npos)
      << reader.problem();
}

TEST(LogFormat, ChecksumMismatchInTheLastRecordIsATornTail) {
  std::vector<uint64_t> offsets;
  std::string log = log_of(10, &offsets);
  log.back() ^= 1;
  Reader reader(log);
  EXPECT_EQ(read_all(&reader), 9);
  EXPECT_EQ(reader.end(), Reader::End::kTornTail);
}

TEST(LogFormat, BadLengthAtTheEndIsATornTail) {
  std::vector<uint64_t> offsets;
  std::string log = log_of(10, &offsets);
  uint32_t huge = 1'000'000;
  std::memcpy(&log[offsets[9] + 4], &huge, 4);
  Reader reader(log);
  EXPECT_EQ(read_all(&reader), 9);
  EXPECT_EQ(reader.end(), Reader::End::kTornTail);
}

TEST(LogFormat, LengthRunningPastTheEndInTheMiddleIsCorruption) {
  // Damage that makes a middle record claim to run past the end of the file must not pass
  // for a torn tail: whole records follow it.
  std::vector<uint64_t> offsets;
  std::string log = log_of(10, &offsets);
  uint32_t past = static_cast<uint32_t>(log.size());
  std::memcpy(&log[offsets[3] + 4], &past, 4);
  Reader reader(log);
  EXPECT_EQ(read_all(&reader), 3);
  EXPECT_EQ(reader.end(), Reader::End::kCorrupt) << reader.problem();
}

TEST(LogFormat, ImpossibleLengthInTheMiddleIsCorruption) {
  std::vector<uint64_t> offsets;
  std::string log = log_of(10, &offsets);
  log += std::string(kMaxPayload + kHeaderSize, 'x');  // plenty of data after it
  uint32_t wild = 0xfffffff0u;
  std::memcpy(&log[offsets[3] + 4], &wild, 4);
  Reader reader(log);
  EXPECT_EQ(read_all(&reader), 3);
  EXPECT_EQ(reader.end(), Reader::End::kCorrupt);
}

TEST(LogFormat, ZeroFilledTailIsATornTail) {
  std::string log = log_of(10);
  const size_t good = log.size();
  log += std::string(4096, '\0');  // a file extended but never written, as after a crash
  Reader reader(log);
  EXPECT_EQ(read_all(&reader), 10);
  EXPECT_EQ(reader.end(), Reader::End::kTornTail);
  EXPECT_EQ(reader.valid_bytes(), good);
}

TEST(LogFormat, ZeroedRecordWithDataAfterItIsCorruption) {
  std::vector<uint64_t> offsets;
  std::string log = log_of(10, &offsets);
  std::fill(log.begin() + static_cast<std::ptrdiff_t>(offsets[2]),
            log.begin() + static_cast<std::ptrdiff_t>(offsets[3]), '\0');
  Reader reader(log);
  EXPECT_EQ(read_all(&reader), 2);
  EXPECT_EQ(reader.end(), Reader::End::kCorrupt);
}

TEST(LogFormat, RecordSplitAcrossWriteBoundaries) {
  // One record reaches the file in two write(2) calls: between them, a reader of the file
  // sees a torn tail and the earlier records; after both, every record.
  auto path = std::filesystem::temp_directory_path() / ("anteroom-log-" + std::to_string(getpid()));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  std::string first = log_of(3);
  std::string all = log_of(4);
  std::string last = all.substr(first.size());
  auto slurp = [&] {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  ASSERT_EQ(::write(fd, first.data(), first.size()), static_cast<ssize_t>(first.size()));
  ASSERT_EQ(::write(fd, last.data(), 5), 5);  // half a header
  {
    std::string now = slurp();
    Reader reader(now);
    EXPECT_EQ(read_all(&reader), 3);
    EXPECT_EQ(reader.end(), Reader::End::kTornTail);
  }
  ASSERT_EQ(::write(fd, last.data() + 5, last.size() - 5), static_cast<ssize_t>(last.size() - 5));
  ::close(fd);
  std::string done = slurp();
  Reader reader(done);
  EXPECT_EQ(read_all(&reader), 4);
  EXPECT_EQ(reader.end(), Reader::End::kClean);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace anteroom::logfmt
