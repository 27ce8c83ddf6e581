#include "loadgen/ws_frame.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

namespace anteroom::loadgen {

std::string ws_client_frame(WsOpcode op, std::string_view payload, std::array<uint8_t, 4> mask) {
  std::string f;
  f.reserve(payload.size() + 14);
  f.push_back(static_cast<char>(0x80 | static_cast<uint8_t>(op)));
  size_t n = payload.size();
  if (n < 126) {
    f.push_back(static_cast<char>(0x80 | n));
  } else if (n <= 0xffff) {
    f.push_back(static_cast<char>(0x80 | 126));
    f.push_back(static_cast<char>(n >> 8));
    f.push_back(static_cast<char>(n & 0xff));
  } else {
    f.push_back(static_cast<char>(0x80 | 127));
    for (int i = 7; i >= 0; --i) f.push_back(static_cast<char>((uint64_t{n} >> (8 * i)) & 0xff));
  }
  for (uint8_t m : mask) f.push_back(static_cast<char>(m));
  for (size_t i = 0; i < n; ++i) {
    f.push_back(static_cast<char>(static_cast<uint8_t>(payload[i]) ^ mask[i % 4]));
  }
  return f;
}

size_t ws_parse_frame(std::string_view b, size_t max_payload, WsFrame* out) {
  if (b.size() < 2) return kWsNeedMore;
  auto byte = [&](size_t i) { return static_cast<uint8_t>(b[i]); };
  uint8_t b0 = byte(0);
  uint8_t b1 = byte(1);
  if ((b0 & 0x70) != 0) return kWsBad;  // reserved bits: no extension was agreed
  if ((b1 & 0x80) != 0) return kWsBad;  // servers never mask
  uint8_t op = b0 & 0x0f;
  bool control = (op & 0x08) != 0;
  if (op != 0 && op != 1 && op != 2 && op != 8 && op != 9 && op != 10) return kWsBad;
  bool fin = (b0 & 0x80) != 0;
  uint64_t len = b1 & 0x7f;
  size_t head = 2;
  if (len == 126) {
    if (b.size() < 4) return kWsNeedMore;
    len = (uint64_t{byte(2)} << 8) | byte(3);
    head = 4;
  } else if (len == 127) {
    if (b.size() < 10) return kWsNeedMore;
    len = 0;
    for (size_t i = 2; i < 10; ++i) len = (len << 8) | byte(i);
    head = 10;
  }
  if (control && (len > 125 || !fin)) return kWsBad;
  if (len > max_payload) return kWsBad;
  if (b.size() - head < len) return kWsNeedMore;
  out->fin = fin;
  out->opcode = static_cast<WsOpcode>(op);
  out->payload = b.substr(head, len);
  return head + len;
}

namespace {
std::string base64(const unsigned char* data, size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  int len =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(static_cast<size_t>(len));
  return out;
}
}  // namespace

std::string ws_accept_for(std::string_view key) {
  std::string s(key);
  s += "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(s.data()), s.size(), digest);
  return base64(digest, sizeof digest);
}

std::string ws_new_key() {
  unsigned char raw[16];
  RAND_bytes(raw, sizeof raw);
  return base64(raw, sizeof raw);
}

}  // namespace anteroom::loadgen
