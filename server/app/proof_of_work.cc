// OpenSSL's SHA256_* calls are deprecated in 3.0 in favour of EVP, which fetches and
// allocates on every digest: several times the cost of the hashing itself at 80 bytes. The
// low-level calls stay in OpenSSL 3 and use the same (SHA-NI) code.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "server/app/proof_of_work.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

#include "engine/model.h"
#include "server/app/token.h"

namespace anteroom {

struct ProofOfWork::Pads {
  SHA256_CTX inner;
  SHA256_CTX outer;
};

namespace {

constexpr unsigned kMaxBits = 32;
constexpr int64_t kBucketSeconds = 64;

void update(SHA256_CTX* c, std::string_view s) { SHA256_Update(c, s.data(), s.size()); }

bool parse_int(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 12 || (s.size() > 1 && s[0] == '0')) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
}

bool nonce_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

ProofOfWork::ProofOfWork(std::string_view key) : pads_(std::make_unique<Pads>()) {
  std::array<uint8_t, SHA256_CBLOCK> block{};
  if (key.size() > block.size()) {
    SHA256(reinterpret_cast<const uint8_t*>(key.data()), key.size(), block.data());
  } else {
    std::memcpy(block.data(), key.data(), key.size());
  }
  std::array<uint8_t, SHA256_CBLOCK> ipad{}, opad{};
  for (size_t i = 0; i < block.size(); ++i) {
    ipad[i] = block[i] ^ 0x36;
    opad[i] = block[i] ^ 0x5c;
  }
  SHA256_Init(&pads_->inner);
  SHA256_Update(&pads_->inner, ipad.data(), ipad.size());
  SHA256_Init(&pads_->outer);
  SHA256_Update(&pads_->outer, opad.data(), opad.size());
  OPENSSL_cleanse(block.data(), block.size());
  OPENSSL_cleanse(ipad.data(), ipad.size());
  OPENSSL_cleanse(opad.data(), opad.size());
}

ProofOfWork::~ProofOfWork() { OPENSSL_cleanse(pads_.get(), sizeof(Pads)); }

std::array<uint8_t, 16> ProofOfWork::mac(std::string_view room,
                                         std::string_view signed_part) const {
  SHA256_CTX c = pads_->inner;
  update(&c, room);
  update(&c, "\n");
  update(&c, signed_part);
  uint8_t inner[SHA256_DIGEST_LENGTH];
  SHA256_Final(inner, &c);
  c = pads_->outer;
  SHA256_Update(&c, inner, sizeof inner);
  uint8_t full[SHA256_DIGEST_LENGTH];
  SHA256_Final(full, &c);
  std::array<uint8_t, 16> out{};
  std::memcpy(out.data(), full, out.size());
  return out;
}

int64_t ProofOfWork::expires_in(unsigned bits) {
  return 120 + static_cast<int64_t>((uint64_t{1} << std::min(bits, kMaxBits)) / 10'000);
}

unsigned ProofOfWork::auto_bits(double joins_per_second) {
  if (!(joins_per_second >= 50)) return 10;  // also NaN
  const double doublings = std::ceil(std::log2(joins_per_second / 50) - 1e-9);
  return static_cast<unsigned>(std::min(22.0, 10 + std::max(0.0, doublings)));
}

unsigned ProofOfWork::work_bits(std::string_view challenge, std::string_view nonce) {
  SHA256_CTX c;
  SHA256_Init(&c);
  update(&c, challenge);
  update(&c, ":");
  update(&c, nonce);
  uint8_t d[SHA256_DIGEST_LENGTH];
  SHA256_Final(d, &c);
  unsigned bits = 0;
  for (uint8_t byte : d) {
    if (byte != 0) return bits + static_cast<unsigned>(std::countl_zero(byte));
    bits += 8;
  }
  return bits;
}

PowChallenge ProofOfWork::issue(std::string_view room, unsigned difficulty, int64_t now_s) const {
  difficulty = std::min(difficulty, kMaxBits);
  PowChallenge ch;
  ch.difficulty = difficulty;
  ch.expires_in_s = expires_in(difficulty);
  uint8_t random[12];
  if (RAND_bytes(random, sizeof random) != 1) std::abort();  // no randomness: nothing is safe
  std::string text = std::to_string(now_s + ch.expires_in_s) + "." + std::to_string(difficulty) +
                     "." + base64url_encode({reinterpret_cast<const char*>(random), sizeof random});
  const auto m = mac(room, text);
  text += '.';
  text += base64url_encode({reinterpret_cast<const char*>(m.data()), m.size()});
  ch.text = std::move(text);
  return ch;
}

std::optional<ProofOfWork::Parsed> ProofOfWork::parse(std::string_view room,
                                                      std::string_view challenge) const {
  // expiry "." difficulty "." 16 characters "." 22 characters
  const size_t last = challenge.rfind('.');
  if (challenge.size() > 80 || last == std::string_view::npos) return std::nullopt;
  const std::string_view signed_part = challenge.substr(0, last);
  const auto given = base64url_decode(challenge.substr(last + 1));
  if (!given || given->size() != 16) return std::nullopt;
  const size_t dot1 = signed_part.find('.');
  const size_t dot2 = dot1 == std::string_view::npos ? dot1 : signed_part.find('.', dot1 + 1);
  int64_t expiry = 0, bits = 0;
  if (dot2 == std::string_view::npos || !parse_int(signed_part.substr(0, dot1), &expiry) ||
      !parse_int(signed_part.substr(dot1 + 1, dot2 - dot1 - 1), &bits) || bits > kMaxBits) {
    return std::nullopt;
  }
  const auto want = mac(room, signed_part);
  if (CRYPTO_memcmp(want.data(), given->data(), want.size()) != 0) return std::nullopt;
  Parsed p;
  std::memcpy(&p.id, want.data(), sizeof p.id);
  p.expiry = expiry;
  p.bits = static_cast<unsigned>(bits);
  return p;
}

PowVerdict ProofOfWork::check(std::string_view room, std::string_view challenge,
                              std::string_view nonce, unsigned required, int64_t now_s,
                              PowSolved* solved) const {
  if (nonce.empty() || nonce.size() > kMaxNonce ||
      !std::all_of(nonce.begin(), nonce.end(), nonce_char)) {
    return PowVerdict::kInvalid;
  }
  const auto p = parse(room, challenge);
  if (!p) return PowVerdict::kInvalid;
  if (p->expiry < now_s) return PowVerdict::kExpired;
  if (p->bits < required) return PowVerdict::kTooEasy;
  if (work_bits(challenge, nonce) < p->bits) return PowVerdict::kInvalid;
  if (solved != nullptr) *solved = PowSolved{p->id, p->expiry};
  std::lock_guard lock(used_mu_);
  auto r = used_.find(room);
  if (r == used_.end()) return PowVerdict::kOk;
  auto b = r->second.by_expiry.find(p->expiry / kBucketSeconds);
  if (b != r->second.by_expiry.end() && b->second.contains(p->id)) return PowVerdict::kUsed;
  return PowVerdict::kOk;
}

PowVerdict ProofOfWork::spend(std::string_view room, const PowSolved& p, int64_t now_ms) {
  const int64_t now_s = now_ms / 1000;
  {
    std::lock_guard lock(used_mu_);
    auto r = used_.find(room);
    if (r == used_.end()) r = used_.emplace(std::string(room), Spent{}).first;
    Spent& spent = r->second;
    // Forget what has expired: buckets wholly before now.
    while (!spent.by_expiry.empty() &&
           (spent.by_expiry.begin()->first + 1) * kBucketSeconds <= now_s) {
      spent.total -= spent.by_expiry.begin()->second.size();
      used_total_ -= spent.by_expiry.begin()->second.size();
      spent.by_expiry.erase(spent.by_expiry.begin());
    }
    auto& bucket = spent.by_expiry[p.expiry / kBucketSeconds];
    if (bucket.contains(p.id)) return PowVerdict::kUsed;
    if (spent.total >= kMaxUsed) return PowVerdict::kBusy;
    bucket.insert(p.id);
    ++spent.total;
    ++used_total_;
  }
  difficulty(room, RoomConfig::kPowAuto, now_ms, true);
  return PowVerdict::kOk;
}

unsigned ProofOfWork::difficulty(std::string_view room, uint8_t setting, int64_t now_ms,
                                 bool count) {
  if (setting != RoomConfig::kPowAuto) return setting;
  const int64_t second = now_ms / 1000;
  std::lock_guard lock(rate_mu_);
  auto it = rates_.find(room);
  if (it == rates_.end()) it = rates_.emplace(std::string(room), Rate{second, 0, 0}).first;
  Rate& r = it->second;
  if (second > r.second) {
    // Each finished second weighs 30% in the average; seconds without joins count as 0.
    r.per_second = r.per_second * 0.7 + r.this_second * 0.3;
    const int64_t idle = std::min<int64_t>(second - r.second - 1, 64);
    r.per_second *= std::pow(0.7, static_cast<double>(idle));
    r.second = second;
    r.this_second = 0;
  }
  if (count) ++r.this_second;
  // A rush shows within its first second: the joins so far this second count as a rate.
  return auto_bits(std::max(r.per_second, static_cast<double>(r.this_second)));
}

size_t ProofOfWork::used_count() const {
  std::lock_guard lock(used_mu_);
  return used_total_;
}

}  // namespace anteroom
