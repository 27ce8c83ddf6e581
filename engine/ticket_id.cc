#include "engine/ticket_id.h"

#include <openssl/rand.h>

#include <cstdlib>
#include <cstring>

namespace anteroom {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

constexpr std::array<int8_t, 256> make_reverse() {
  std::array<int8_t, 256> r{};
  for (auto& v : r) v = -1;
  for (int i = 0; i < 64; ++i) r[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return r;
}
constexpr std::array<int8_t, 256> kReverse = make_reverse();

uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

void fill_random(void* out, size_t n) {
  if (RAND_bytes(static_cast<unsigned char*>(out), static_cast<int>(n)) != 1) {
    std::abort();  // no randomness means no unguessable ids: refuse to go on
  }
}

struct RandomBuffer {
  static constexpr size_t kWords = 1024;
  std::array<uint32_t, kWords> words{};
  size_t next = kWords;
};

}  // namespace

Tag random_tag() {
  thread_local RandomBuffer buf;
  if (buf.next + 3 > RandomBuffer::kWords) {
    fill_random(buf.words.data(), sizeof(buf.words));
    buf.next = 0;
  }
  Tag t{buf.words[buf.next], buf.words[buf.next + 1], buf.words[buf.next + 2]};
  buf.next += 3;
  return t;
}

IdCodec::IdCodec() { fill_random(key_.data(), sizeof(key_)); }

uint64_t IdCodec::mask(const Tag& tag) const {
  uint64_t a = (uint64_t{tag[0]} << 32) | tag[1];
  return mix64(a ^ key_[0]) ^ mix64(uint64_t{tag[2]} ^ key_[1]);
}

TicketId IdCodec::encode(uint64_t seq, const Tag& tag) const {
  std::array<uint8_t, 21> raw{};  // 20 bytes plus one zero byte so groups of 3 read cleanly
  uint64_t masked = seq ^ mask(tag);
  std::memcpy(raw.data(), &masked, 8);
  std::memcpy(raw.data() + 8, tag.data(), 12);
  TicketId out{};
  size_t o = 0;
  for (size_t i = 0; i < 21; i += 3) {
    uint32_t v = (uint32_t{raw[i]} << 16) | (uint32_t{raw[i + 1]} << 8) | raw[i + 2];
    for (int k = 3; k >= 0 && o < out.size(); --k, ++o) {
      out[o] = kAlphabet[(v >> (6 * k)) & 63];
    }
  }
  return out;
}

bool IdCodec::decode(std::string_view text, uint64_t* seq, Tag* tag) const {
  if (text.size() != 27) return false;
  std::array<uint8_t, 21> raw{};
  size_t t = 0;
  for (size_t i = 0; i < 21; i += 3) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      int8_t d = t < text.size() ? kReverse[static_cast<unsigned char>(text[t++])] : 0;
      if (d < 0) return false;
      v = (v << 6) | static_cast<uint32_t>(d);
    }
    raw[i] = static_cast<uint8_t>(v >> 16);
    raw[i + 1] = static_cast<uint8_t>(v >> 8);
    raw[i + 2] = static_cast<uint8_t>(v);
  }
  if (raw[20] != 0) return false;  // the last character carried bits beyond byte 20
  uint64_t masked = 0;
  std::memcpy(&masked, raw.data(), 8);
  std::memcpy(tag->data(), raw.data() + 8, 12);
  *seq = masked ^ mask(*tag);
  return true;
}

}  // namespace anteroom
