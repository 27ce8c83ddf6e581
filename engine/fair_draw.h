// The provably fair draw (docs/fairness.md): public ticket refs, the seed's commitment, and the
// order a seed gives a set of refs. docs/fairness.md shows how anyone checks a draw.
//
//   ref(ticket)   = lowercase hex of the first 8 bytes of SHA-256(ticket id)
//   seed          = event_seed(the engine's key, room, the event's nonce)
//   commitment    = SHA-256(seed bytes), shown from the moment the event is set
//   order         = refs by ascending HMAC-SHA256(key = seed bytes, message = ref as ASCII),
//                   compared as bytes (the same as comparing their lowercase hex)
//
// Thread safety: free functions, no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/hex.h"

namespace anteroom {

using Seed = std::array<uint8_t, 32>;
using Digest = std::array<uint8_t, 32>;

// The ref of a ticket id, as a number: its first 8 SHA-256 bytes, big-endian.
uint64_t ticket_ref(std::string_view ticket_id);
// 16 lowercase hex digits.
std::string ref_hex(uint64_t ref);
Digest sha256(const uint8_t* data, size_t n);
// A fresh seed from OpenSSL's CSPRNG.
Seed random_seed();

// HMAC-SHA256 of `message` under `key`.
Digest hmac_sha256(const uint8_t* key, size_t key_size, std::string_view message);

// The seed of an event's draw: HMAC-SHA256(key, "anteroom draw seed" 0 room 0 nonce), the
// nonce the event's public, random identity. Stored and replicated is only the nonce, so
// whoever reads the log or the room's stream before the start cannot compute the order: the
// key is the engine's (EngineOptions::secret), which every node of a cluster derives alike.
Seed event_seed(const Seed& key, std::string_view room, const Seed& nonce);
// The pre-queue's set of refs, committed at the start: SHA-256 of the refs in ascending
// order, each as 16 lowercase hex digits and a newline. Anyone recomputes it from the draw's
// order (sorted), and a ticket holder finds its own ref in the set it names.
Digest refs_commitment(std::vector<uint64_t> refs);

// Positions of `refs` in drawn order: out[k] is the index into `refs` of the k-th drawn.
// Equal refs (never seen in practice: 64-bit) keep their input order. Uses `threads` threads
// for the HMACs (0: the hardware's).
std::vector<uint32_t> draw_order(const Seed& seed, const std::vector<uint64_t>& refs,
                                 unsigned threads = 0);

}  // namespace anteroom
