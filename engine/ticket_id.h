// Ticket ids: 20 bytes, base64url without padding (27 characters).
//
//   bytes 0..7   the ticket's sequence number in its room, XOR a mask derived from the tag
//                and the engine's secret key, so an id does not show the join count
//   bytes 8..19  a 96-bit random tag, also stored in the ticket's slot
//
// Looking a ticket up is decode, index the slot by sequence number, compare the tag: no hash
// map. Guessing a live id means guessing 96 random bits; knowing one id tells nothing about
// another because tags are independent draws from OpenSSL's CSPRNG.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "engine/model.h"

namespace anteroom {

using Tag = std::array<uint32_t, 3>;

// A fresh random tag. Draws from a per-thread buffer refilled with RAND_bytes, so the cost
// per call is a copy. Aborts if the CSPRNG fails (it never does on a seeded Linux system).
Tag random_tag();

class IdCodec {
 public:
  // `key` is the secret the masks derive from; random per engine.
  explicit IdCodec(std::array<uint64_t, 2> key) : key_(key) {}
  IdCodec();  // a random key

  TicketId encode(uint64_t seq, const Tag& tag) const;
  // False if `text` is not 27 canonical base64url characters.
  bool decode(std::string_view text, uint64_t* seq, Tag* tag) const;

 private:
  uint64_t mask(const Tag& tag) const;
  std::array<uint64_t, 2> key_;
};

}  // namespace anteroom
