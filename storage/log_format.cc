#include "storage/log_format.h"

#include "storage/log_resync.h"

#include <array>
#include <cstring>

namespace anteroom::logfmt {
namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // CRC32C, reflected
constexpr uint32_t kMaskDelta = 0xa282ead8;

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
  std::memcpy(&v, p, 4);  // little-endian hosts only (x86-64, arm64); see docs/log-format.md
  return v;
}

}  // namespace

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = kTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

uint32_t unmask_crc(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

void append_record(std::string* out, uint8_t type, std::string_view payload) {
  char header[kHeaderSize];
  uint32_t crc = crc32c(&type, 1);
  crc = mask_crc(crc32c(payload.data(), payload.size(), crc));
  uint32_t len = static_cast<uint32_t>(payload.size());
  std::memcpy(header, &crc, 4);
  std::memcpy(header + 4, &len, 4);
  header[8] = static_cast<char>(type);
  out->append(header, kHeaderSize);
  out->append(payload);
}

bool Reader::stop(End how, std::string why) {
  end_ = how;
  valid_ = pos_;
  problem_ = std::move(why);
  return false;
}

bool Reader::zeros_from(size_t pos) const {
  for (size_t i = pos; i < data_.size(); ++i) {
    if (data_[i] != 0) return false;
  }
  return true;
}

bool Reader::next(Record* r) {
  if (end_ != End::kNotYet) return false;
  const size_t left = data_.size() - pos_;
  if (left == 0) return stop(End::kClean, "");
  const std::string at = " at offset " + std::to_string(pos_);
  if (zeros_from(pos_)) return stop(End::kTornTail, "zero-filled tail" + at);
  if (left < kHeaderSize) return stop(End::kTornTail, "partial record header" + at);
  const char* h = data_.data() + pos_;
  const uint32_t masked = load32(h);
  const uint32_t len = load32(h + 4);
  const auto type = static_cast<uint8_t>(h[8]);
  const bool fits = len <= kMaxPayload && kHeaderSize + len <= left;
  if (!fits) {
    // A length that runs past the end is what an unfinished last write leaves; a wild
    // length with a whole record's worth of data behind it is damage.
    if (len > kMaxPayload && kHeaderSize + kMaxPayload <= left) {
      return stop(End::kCorrupt, "record length " + std::to_string(len) + " is impossible" + at);
    }
    if (valid_record_after(data_, pos_ + 1)) {
      return stop(End::kCorrupt, "record length " + std::to_string(len) +
                                     " runs past the end of the file, "
                                     "but whole records follow it" +
                                     at);
    }
    return stop(End::kTornTail, "record runs past the end of the file" + at);
  }
  const size_t end = pos_ + kHeaderSize + len;
  uint32_t crc = crc32c(&type, 1);
  crc = crc32c(h + kHeaderSize, len, crc);
  if (type == 0 || unmask_crc(masked) != crc) {
    const char* what = type == 0 ? "record of reserved type 0" : "checksum mismatch";
    // The last record, or zeros after it: the last write was torn. Anything else: damage
    // in the middle, which recovery must not silently skip.
    if (end == data_.size() || zeros_from(end))
      return stop(End::kTornTail, std::string(what) + " in the last record" + at);
    return stop(End::kCorrupt, std::string(what) + at);
  }
  r->type = type;
  r->payload = std::string_view(h + kHeaderSize, len);
  r->offset = pos_;
  pos_ = end;
  valid_ = pos_;
  return true;
}

}  // namespace anteroom::logfmt
