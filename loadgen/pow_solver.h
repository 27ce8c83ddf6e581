// The client's side of the proof of work before a join (docs/security.md):
// find a nonce n, 1-64 characters of [A-Za-z0-9._-], such that SHA-256 of the ASCII bytes
// challenge ":" n starts with at least `difficulty` zero bits. Hashed with OpenSSL (an EVP
// context reused, with SHA-256 fetched once: four times the speed of the one-shot SHA256(),
// which fetches the algorithm on every call), none of the server's code. Nonces are decimal
// counters, so the expected work is 2^difficulty hashes. A search runs in steps, so a visitor
// coroutine can yield to the others on its thread between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace anteroom::loadgen {

// Hashes a coroutine tries before it lets the others on its thread run (a few ms).
inline constexpr uint64_t kPowStep = 16384;

// GET /v1/rooms/{room}/challenge's answer.
struct PowChallengeText {
  std::string challenge;
  unsigned difficulty = 0;
  int64_t expires_in_s = 0;
};
// False unless `body` is {"challenge": 1-256 of [A-Za-z0-9._-], "difficulty": 0-64,
// "expires_in": seconds, ...}.
bool parse_challenge(std::string_view body, PowChallengeText* out);

// Leading zero bits of `bytes` (n bytes, most significant bit of bytes[0] first); 8n if all
// are zero.
unsigned leading_zero_bits(const unsigned char* bytes, size_t n);

// Leading zero bits of SHA-256(challenge ":" nonce).
unsigned pow_work_bits(std::string_view challenge, std::string_view nonce);

class PowSearch {
 public:
  // `start`: the first counter tried (so that two searches of one challenge differ).
  PowSearch(std::string_view challenge, unsigned difficulty, uint64_t start = 0);

  // Tries up to `max_tries` more nonces. True when one solves the challenge: it is then
  // nonce(), and further steps return true at once.
  bool step(uint64_t max_tries);
  const std::string& nonce() const { return nonce_; }
  uint64_t hashes() const { return hashes_; }  // tried so far

 private:
  struct FreeCtx {
    void operator()(evp_md_ctx_st* c) const;
  };
  std::unique_ptr<evp_md_ctx_st, FreeCtx> ctx_;
  std::string buf_;  // challenge ":" and room for the counter's digits
  size_t prefix_ = 0;
  unsigned difficulty_;
  uint64_t next_;
  uint64_t hashes_ = 0;
  bool found_ = false;
  std::string nonce_;
};

// A whole search at once (tests, and bots that do not mind blocking).
std::string solve_pow(std::string_view challenge, unsigned difficulty, uint64_t* hashes = nullptr);

// A nonce that does NOT solve the challenge at `difficulty` (a forger's guess, certain to be
// wrong); `seed` varies it. For difficulty 0 every nonce solves: returns "x".
std::string wrong_nonce(std::string_view challenge, unsigned difficulty, uint64_t seed);

}  // namespace anteroom::loadgen
