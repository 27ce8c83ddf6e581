// Line's private parts, shared by line.cc (the live side) and line_restore.cc (recovery's).
// Only those two files include this header.
#pragma once

#include <atomic>
#include <cstdint>

#include "engine/line.h"

namespace anteroom::line_parts {

constexpr uint64_t kSegsPerChunk = uint64_t{1} << Line::kChunkBits;
constexpr uint64_t kSegMask = Line::kSegment - 1;

inline uint64_t chunk_index(uint64_t seq) { return seq >> (Line::kSegmentBits + Line::kChunkBits); }
inline uint64_t seg_in_chunk(uint64_t seq) {
  return (seq >> Line::kSegmentBits) & (kSegsPerChunk - 1);
}

}  // namespace anteroom::line_parts

namespace anteroom {

struct Line::Segment {
  Slot slots[kSegment];
  uint32_t tree[kSegment + 1];  // holes per slot
  std::atomic<uint32_t> holes{0};
  uint32_t ended = 0;  // owner: tickets of this segment that ended (or never were)
};

struct Line::Chunk {
  std::atomic<Segment*> segs[line_parts::kSegsPerChunk];
  uint32_t tree[line_parts::kSegsPerChunk + 1];  // holes per segment
  std::atomic<uint64_t> holes{0};
  uint32_t given_back = 0;  // owner: segments replaced by the sentinel
};

// The directory's second level: 1,024 chunk entries, 2^30 tickets.
struct Line::Block {
  std::atomic<Chunk*> chunks[kChunksPerBlock];
};

}  // namespace anteroom
