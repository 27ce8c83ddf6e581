// The check anyone can make of a scheduled event's draw (docs/fairness.md), done here with
// OpenSSL apart from the server's code: the seed is the one committed to, and the order is
// the one the seed gives the refs.
//
//   commitment = SHA-256(seed bytes), published when the event is set
//   order      = refs ascending by lowercase-hex HMAC-SHA256(key = seed bytes, message = ref)
//   refs       = SHA-256 of the refs sorted, each as hex and a newline, published at the start
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace anteroom::loadgen {

// GET /v1/rooms/{room}/event/draw, as published.
struct Draw {
  std::string seed;                // hex
  std::string seed_sha256;         // hex
  std::string refs_sha256;         // hex: SHA-256 of the refs sorted, each hex and "\n"
  std::vector<std::string> order;  // refs, 16 lowercase hex digits each
};

// False if `body` is not a draw.
bool parse_draw(std::string_view body, Draw* out);

// Lowercase hex of SHA-256(bytes) and of HMAC-SHA256(key, message).
std::string sha256_hex(std::string_view bytes);
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

// Bytes of a hex string; false if it is not one.
bool from_hex(std::string_view hex, std::string* bytes);

// Checks `draw` against the commitment shown before the pre-queue opened and, unless empty,
// the commitment to its set of refs shown at the start (`refs_commitment`, GET .../event's
// refs_sha256). Returns an empty string, or what failed.
std::string verify_draw(const Draw& draw, const std::string& commitment,
                        const std::string& refs_commitment = "");

// A ref as the number VisitorRecord keeps; 0 if `ref` is not 16 lowercase hex digits.
uint64_t ref_number(std::string_view ref);

}  // namespace anteroom::loadgen
