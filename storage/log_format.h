// Record framing of the append-only log (log_records.h says what the records hold). The format
// is specified in docs/log-format.md:
//
//   record := masked_crc32c:u32le  length:u32le  type:u8  payload[length]
//
// The CRC32C (Castagnoli) covers type and payload and is masked as LevelDB masks it, so a
// log that stores CRCs inside payloads does not checksum checksums. Records are appended
// back to back; there are no blocks or padding.
//
// Reading tells three endings apart: a clean end; a torn tail (the last write did not
// finish: a partial header, a record that runs past the end of the file, a bad last
// record, or zeros to the end), which recovery cuts off with a warning; and corruption
// (a bad record with good data after it), which must stop start-up.
//
// Thread safety: none needed; Reader and append_record work on caller-owned memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace anteroom::logfmt {

constexpr size_t kHeaderSize = 9;
constexpr uint32_t kMaxPayload = 1u << 24;  // 16 MiB: a larger length is damage

// CRC32C of `n` bytes, continuing from `crc` (0 to start).
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);
uint32_t mask_crc(uint32_t crc);
uint32_t unmask_crc(uint32_t masked);

// Appends one framed record to *out. `type` 0 is reserved (a zero-filled tail reads as 0).
void append_record(std::string* out, uint8_t type, std::string_view payload);

struct Record {
  uint8_t type = 0;
  std::string_view payload;  // points into the Reader's data
  uint64_t offset = 0;       // of the record's header in the file
};

class Reader {
 public:
  enum class End { kNotYet, kClean, kTornTail, kCorrupt };

  explicit Reader(std::string_view data) : data_(data) {}

  // The next record; false once the data ends (see end()).
  bool next(Record* r);

  End end() const { return end_; }
  // Where the valid records stop: the file's size for a clean end, else the offset of the
  // first bad byte (cut the file here to repair a torn tail).
  uint64_t valid_bytes() const { return valid_; }
  // What was wrong, for kTornTail and kCorrupt.
  const std::string& problem() const { return problem_; }

 private:
  bool stop(End how, std::string why);
  bool zeros_from(size_t pos) const;

  std::string_view data_;
  size_t pos_ = 0;
  uint64_t valid_ = 0;
  End end_ = End::kNotYet;
  std::string problem_;
};

}  // namespace anteroom::logfmt
