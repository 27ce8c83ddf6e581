// WebSocket framing (RFC 6455) as a client needs it: masked frames out, unmasked frames in.
// Pure functions over bytes, so the tests can feed them anything.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace anteroom::loadgen {

enum class WsOpcode : uint8_t {
  kContinuation = 0,
  kText = 1,
  kBinary = 2,
  kClose = 8,
  kPing = 9,
  kPong = 10
};

// One whole client frame (FIN set), payload masked with `mask`.
std::string ws_client_frame(WsOpcode op, std::string_view payload, std::array<uint8_t, 4> mask);

struct WsFrame {
  bool fin = false;
  WsOpcode opcode = WsOpcode::kText;
  std::string_view payload;  // points into the parsed bytes
};

inline constexpr size_t kWsNeedMore = 0;
inline constexpr size_t kWsBad = SIZE_MAX;
// Parses one server frame from the front of `bytes`: its length in bytes, kWsNeedMore if
// `bytes` holds only part of it, or kWsBad if it breaks the protocol (a masked server frame,
// a reserved bit or opcode, a control frame over 125 bytes or fragmented, over `max_payload`).
size_t ws_parse_frame(std::string_view bytes, size_t max_payload, WsFrame* out);

// The Sec-WebSocket-Accept a server must answer to `key`.
std::string ws_accept_for(std::string_view key);
// A fresh random Sec-WebSocket-Key (16 random bytes, base64).
std::string ws_new_key();

}  // namespace anteroom::loadgen
