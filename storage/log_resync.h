// Whether a whole, valid record starts anywhere after a damaged one: what tells a torn last
// write (nothing valid after it) from damage in the middle (log_format.h). Asked only on the
// error path, but of hostile input too, so it must not cost more than linear time: checking
// the CRC at every offset afresh is quadratic (a crafted 128 KiB log took 10 s), and 16 MiB
// of random bytes did not finish in two minutes.
//
// How: the CRC of any range follows from two prefix values, because CRC32C is linear over
// GF(2). With P(x) the CRC register (zero start, no final inversion) over data[s, x),
//   crc32c(data[a, b)) = ~(P(b) ^ (P(a) ^ 0xFFFFFFFF) * x^(8(b-a)) mod the polynomial),
// and x^(8n) comes from two small tables (n below and above 4096) and one product. So the
// candidates (every offset whose header is plausible) are gathered a window at a time, sorted
// by where their record would end, and one sweep over the bytes computes P and checks each
// candidate when it reaches that end. Work: about 17 MiB of CRC per 1 MiB window at most
// (a record is at most 16 MiB), memory about 20 MiB, whatever the input.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace anteroom::logfmt {

// Whether a whole record with a matching CRC, a non-zero type and a length of at most
// kMaxPayload starts at some offset in [from, data.size()). *work, if given, gets the bytes
// the search put through the CRC (for tests of its cost).
bool valid_record_after(std::string_view data, size_t from, uint64_t* work = nullptr);

}  // namespace anteroom::logfmt
