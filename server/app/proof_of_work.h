// Proof of work before a join (room field pow_difficulty, docs/security.md).
//
// A challenge is stateless: "<expiry>.<difficulty>.<nonce>.<mac>", where expiry is Unix
// seconds, nonce 12 random bytes and mac the first 16 bytes of HMAC-SHA256(key, room "\n"
// expiry "." difficulty "." nonce), all in base64url or decimal, so it needs no memory until
// it is used, and one room's challenge is no good in another. The key is derived from the
// token secret, so every node of a cluster issues and accepts the same challenges.
//
// A solution is a string n with SHA-256(challenge ":" n) starting with `difficulty` zero
// bits. Checking one costs an HMAC and a SHA-256 of about 80 bytes (four compressions with
// precomputed HMAC pads; bench/pow_bench.cc). A challenge is accepted once: check() says
// whether a solution is good, spend() then records it (the server checks the per-address
// limit in between, so a limited address cannot fill the record). The MACs of spent
// challenges are kept per room, grouped by expiry, until they expire: at most kMaxUsed in a
// room at once (past that the room's new solutions are refused as busy until old ones
// expire; other rooms go on).
//
// `pow_difficulty: "auto"` (kPowAuto) sets the difficulty from the rate at which this node
// accepts the room's solutions (auto_bits): fetching challenges, which costs nothing, does
// not move it.
//
// Thread safety: issue() and check() from any thread (the used set has a mutex; the rate
// counters another).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace anteroom {

enum class PowVerdict { kOk, kInvalid, kExpired, kUsed, kTooEasy, kBusy };

// A challenge check() found good: what spend() records.
struct PowSolved {
  uint64_t id = 0;  // the first 8 bytes of its MAC
  int64_t expiry = 0;
};

struct PowChallenge {
  std::string text;
  unsigned difficulty = 0;
  int64_t expires_in_s = 0;
};

class ProofOfWork {
 public:
  static constexpr size_t kMaxUsed = size_t{1} << 20;  // spent challenges kept per room
  static constexpr size_t kMaxNonce = 64;

  // `key`: any bytes (derived from the token secret).
  explicit ProofOfWork(std::string_view key);
  ~ProofOfWork();
  ProofOfWork(const ProofOfWork&) = delete;
  ProofOfWork& operator=(const ProofOfWork&) = delete;

  // A challenge of `difficulty` bits for `room`, valid from now_s for expires_in(difficulty).
  PowChallenge issue(std::string_view room, unsigned difficulty, int64_t now_s) const;
  // Whether `nonce` solves `challenge` for `room` at now_s with at least `required` bits (the
  // challenge's own difficulty counts if it is at least `required`) and it was not spent.
  // Records nothing; on kOk, *solved (if given) is what spend() takes.
  PowVerdict check(std::string_view room, std::string_view challenge, std::string_view nonce,
                   unsigned required, int64_t now_s, PowSolved* solved = nullptr) const;
  // Records a challenge check() found good as spent: kOk, kUsed (spent meanwhile) or kBusy
  // (the room's record is full). Counts it in the room's rate.
  PowVerdict spend(std::string_view room, const PowSolved& solved, int64_t now_ms);
  // The difficulty `setting` asks for in `room` now: setting itself unless it is kPowAuto,
  // then auto_bits of the rate of solutions spent (`count`: this is one more).
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
  // A challenge's MAC (checked) and expiry; nullopt if it is not one of ours for `room`.
  struct Parsed {
    uint64_t id = 0;  // the first 8 bytes of the MAC
    int64_t expiry = 0;
    unsigned bits = 0;
  };
  std::optional<Parsed> parse(std::string_view room, std::string_view challenge) const;

  struct Pads;
  std::unique_ptr<Pads> pads_;  // HMAC inner and outer states after the key block
  mutable std::mutex used_mu_;
  // Spent challenges (the first 8 bytes of their MAC) per room, by expiry second / 64.
  struct Spent {
    std::map<int64_t, std::unordered_set<uint64_t>> by_expiry;
    size_t total = 0;
  };
  std::map<std::string, Spent, std::less<>> used_;
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
