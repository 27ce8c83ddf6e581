#include "loadgen/pow_solver.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <boost/json.hpp>
#include <charconv>

namespace anteroom::loadgen {

namespace {

// SHA-256 fetched once for the process (before any worker forks or thread starts, or at the
// first use: a function-local static is initialised once).
const EVP_MD* sha256_md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

// SHA-256 of `n` bytes at `data` into `digest`, on a reused context.
void sha256(EVP_MD_CTX* ctx, const char* data, size_t n, unsigned char* digest) {
  unsigned len = 0;
  EVP_DigestInit_ex(ctx, sha256_md(), nullptr);
  EVP_DigestUpdate(ctx, data, n);
  EVP_DigestFinal_ex(ctx, digest, &len);
}

}  // namespace

void PowSearch::FreeCtx::operator()(evp_md_ctx_st* c) const { EVP_MD_CTX_free(c); }

bool parse_challenge(std::string_view body, PowChallengeText* out) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) return false;
  const boost::json::object& o = v.get_object();
  const boost::json::value* c = o.if_contains("challenge");
  const boost::json::value* d = o.if_contains("difficulty");
  const boost::json::value* e = o.if_contains("expires_in");
  if (c == nullptr || !c->is_string() || d == nullptr || e == nullptr) return false;
  const std::string_view text = c->get_string();
  if (text.empty() || text.size() > 256 ||
      text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
          std::string_view::npos) {
    return false;
  }
  const auto whole = [](const boost::json::value* x, int64_t hi, int64_t* n) {
    if (x->is_int64())
      *n = x->get_int64();
    else if (x->is_uint64() && x->get_uint64() <= static_cast<uint64_t>(hi))
      *n = static_cast<int64_t>(x->get_uint64());
    else
      return false;
    return *n >= 0 && *n <= hi;
  };
  int64_t bits = 0;
  int64_t expires = 0;
  if (!whole(d, 64, &bits) || !whole(e, INT32_MAX, &expires)) return false;
  out->challenge = std::string(text);
  out->difficulty = static_cast<unsigned>(bits);
  out->expires_in_s = expires;
  return true;
}

unsigned leading_zero_bits(const unsigned char* bytes, size_t n) {
  unsigned bits = 0;
  for (size_t i = 0; i < n; ++i) {
    const unsigned b = bytes[i];
    if (b == 0) {
      bits += 8;
      continue;
    }
    for (unsigned mask = 0x80; (b & mask) == 0; mask >>= 1) ++bits;
    break;
  }
  return bits;
}

unsigned pow_work_bits(std::string_view challenge, std::string_view nonce) {
  std::string text;
  text.reserve(challenge.size() + 1 + nonce.size());
  text.append(challenge).append(1, ':').append(nonce);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  unsigned len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, sha256_md(), nullptr);
  return leading_zero_bits(digest, sizeof digest);
}

PowSearch::PowSearch(std::string_view challenge, unsigned difficulty, uint64_t start)
    : ctx_(EVP_MD_CTX_new()), difficulty_(difficulty), next_(start) {
  buf_.reserve(challenge.size() + 1 + 20);
  buf_.append(challenge).append(1, ':');
  prefix_ = buf_.size();
  buf_.resize(prefix_ + 20);  // the most digits a uint64_t has
}

bool PowSearch::step(uint64_t max_tries) {
  if (found_) return true;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  char* digits = buf_.data() + prefix_;
  for (uint64_t i = 0; i < max_tries; ++i) {
    const uint64_t n = next_++;
    char* end = std::to_chars(digits, digits + 20, n).ptr;
    ++hashes_;
    sha256(ctx_.get(), buf_.data(), static_cast<size_t>(end - buf_.data()), digest);
    if (leading_zero_bits(digest, sizeof digest) >= difficulty_) {
      nonce_.assign(digits, end);
      found_ = true;
      return true;
    }
  }
  return false;
}

std::string solve_pow(std::string_view challenge, unsigned difficulty, uint64_t* hashes) {
  PowSearch s(challenge, difficulty);
  while (!s.step(uint64_t{1} << 16)) {
  }
  if (hashes != nullptr) *hashes = s.hashes();
  return s.nonce();
}

std::string wrong_nonce(std::string_view challenge, unsigned difficulty, uint64_t seed) {
  if (difficulty == 0) return "x";
  for (uint64_t n = seed;; ++n) {
    std::string nonce = "f" + std::to_string(n);
    if (pow_work_bits(challenge, nonce) < difficulty) return nonce;
  }
}

}  // namespace anteroom::loadgen
