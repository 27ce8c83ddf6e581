// Proof of work before a join (room field pow_difficulty, SPEC section 9, docs/security.md).
//
// A challenge is stateless: "<expiry>.<difficulty>.<nonce>.<mac>", where expiry is Unix
// seconds, nonce 12 random bytes and mac the first 16 bytes of HMAC-SHA256(key, room "\n"
// expiry "." difficulty "." nonce), all in base64url or decimal, so it needs no memory until
// it is used, and one room's challenge is no good in another. The key is derived from the
// token secret, so every node of a cluster issues and accepts the same challenges.
//
// A solution is a string n with SHA-256(challenge ":" n) starting with `difficulty` zero
// bits. Checking one costs an HMAC and a SHA-256 of about 80 bytes (four compressions with
// precomputed HMAC pads; bench/pow_bench.cc). A challenge is accepted once: the MACs of used
// challenges are kept, grouped by expiry, until they expire (a bounded set: past
// kMaxUsed at once, new solutions are refused as busy until old ones expire).
//
// `pow_difficulty: "auto"` (kPowAuto) sets the difficulty from the rate at which this node
// gives out the room's challenges, one per join attempt (auto_bits).
//
// Thread safety: issue() and check() from any thread (the used set has a mutex; the rate
// counters another).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace anteroom {

enum class PowVerdict { kOk, kInvalid, kExpired, kUsed, kTooEasy, kBusy };

struct PowChallenge {
  std::string text;
  unsigned difficulty = 0;
  int64_t expires_in_s = 0;
};

class ProofOfWork {
 public:
  static constexpr size_t kMaxUsed = size_t{1} << 21;  // used challenges kept at once
  static constexpr size_t kMaxNonce = 64;

  // `key`: any bytes (derived from the token secret).
  explicit ProofOfWork(std::string_view key);
  ~ProofOfWork();
  ProofOfWork(const ProofOfWork&) = delete;
  ProofOfWork& operator=(const ProofOfWork&) = delete;

  // A challenge of `difficulty` bits for `room`, valid from now_s for expires_in(difficulty).
  PowChallenge issue(std::string_view room, unsigned difficulty, int64_t now_s) const;
  // Whether `nonce` solves `challenge` for `room` at now_s with at least `required` bits (the
  // challenge's own difficulty counts if it is at least `required`); kOk marks it used.
  PowVerdict check(std::string_view room, std::string_view challenge, std::string_view nonce,
                   unsigned required, int64_t now_s);
  // The difficulty `setting` asks for in `room` now: setting itself unless it is kPowAuto,
  // then auto_bits of the rate of challenges given out (`count`: this is one more).
  unsigned difficulty(std::string_view room, uint8_t setting, int64_t now_ms, bool count);

  // How long a challenge of `bits` lives: two minutes, plus room for slow solvers at high
  // difficulties (2^bits / 10,000 s: 105 s more at 20 bits).
  static int64_t expires_in(unsigned bits);
  // The auto curve: 10 bits below 50 joins/s, one more per doubling above, at most 22.
  static unsigned auto_bits(double joins_per_second);
  // Leading zero bits of SHA-256(challenge ":" nonce).
  static unsigned work_bits(std::string_view challenge, std::string_view nonce);
  size_t used_count() const;

 private:
  std::array<uint8_t, 16> mac(std::string_view room, std::string_view signed_part) const;

  struct Pads;
  std::unique_ptr<Pads> pads_;  // HMAC inner and outer states after the key block
  mutable std::mutex used_mu_;
  // Used challenges (the first 8 bytes of their MAC), by expiry second / 64.
  std::map<int64_t, std::unordered_set<uint64_t>> used_;
  size_t used_total_ = 0;
  struct Rate {
    int64_t second = 0;
    uint32_t this_second = 0;
    double per_second = 0;  // smoothed over the last seconds
  };
  std::mutex rate_mu_;
  std::map<std::string, Rate, std::less<>> rates_;
};

}  // namespace anteroom
