#include "engine/fair_draw.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace anteroom {
namespace {

// SHA-256, fetched once (EVP_sha256() would look it up on every use in OpenSSL 3).
const EVP_MD* sha256_md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

void write_hex(uint64_t v, char* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i) {
    out[i] = kDigits[v & 15];
    v >>= 4;
  }
}

// An HMAC-SHA256 keyed with the seed once, duplicated for each message.
class Mac {
 public:
  explicit Mac(const Seed& seed) {
    EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    keyed_ = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac);
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                           OSSL_PARAM_construct_end()};
    if (keyed_ == nullptr || EVP_MAC_init(keyed_, seed.data(), seed.size(), params) != 1) {
      throw std::runtime_error("HMAC-SHA256 is not available");
    }
  }
  ~Mac() { EVP_MAC_CTX_free(keyed_); }
  Mac(const Mac&) = delete;
  Mac& operator=(const Mac&) = delete;

  Digest of(uint64_t ref) const {
    char text[16];
    write_hex(ref, text);
    EVP_MAC_CTX* c = EVP_MAC_CTX_dup(keyed_);
    Digest d{};
    size_t n = 0;
    if (c == nullptr || EVP_MAC_update(c, reinterpret_cast<const uint8_t*>(text), 16) != 1 ||
        EVP_MAC_final(c, d.data(), &n, d.size()) != 1) {
      EVP_MAC_CTX_free(c);
      throw std::runtime_error("HMAC-SHA256 failed");
    }
    EVP_MAC_CTX_free(c);
    return d;
  }

 private:
  EVP_MAC_CTX* keyed_ = nullptr;
};

}  // namespace

Digest sha256(const uint8_t* data, size_t n) {
  Digest d{};
  unsigned len = 0;
  if (EVP_Digest(data, n, d.data(), &len, sha256_md(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed");
  }
  return d;
}

uint64_t ticket_ref(std::string_view id) {
  const Digest d = sha256(reinterpret_cast<const uint8_t*>(id.data()), id.size());
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[i];
  return v;
}

std::string ref_hex(uint64_t ref) {
  std::string s(16, '0');
  write_hex(ref, s.data());
  return s;
}

Digest hmac_sha256(const uint8_t* key, size_t key_size, std::string_view message) {
  Digest d{};
  size_t n = 0;
  if (EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key, key_size,
                reinterpret_cast<const unsigned char*>(message.data()), message.size(), d.data(),
                d.size(), &n) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return d;
}

Seed event_seed(const Seed& key, std::string_view room, const Seed& nonce) {
  std::string message = "anteroom draw seed";
  message += '\0';
  message += room;
  message += '\0';
  message.append(reinterpret_cast<const char*>(nonce.data()), nonce.size());
  return hmac_sha256(key.data(), key.size(), message);
}

Digest refs_commitment(std::vector<uint64_t> refs) {
  std::sort(refs.begin(), refs.end());
  std::string text;
  text.reserve(17 * refs.size());
  for (uint64_t r : refs) {
    text += ref_hex(r);
    text += '\n';
  }
  return sha256(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

Seed random_seed() {
  Seed s{};
  if (RAND_bytes(s.data(), static_cast<int>(s.size())) != 1) {
    throw std::runtime_error("the CSPRNG failed");
  }
  return s;
}

std::vector<uint32_t> draw_order(const Seed& seed, const std::vector<uint64_t>& refs,
                                 unsigned threads) {
  // Sort by the HMAC's first 8 bytes; compare whole HMACs only where those tie.
  const size_t n = refs.size();
  std::vector<uint64_t> head(n);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(1, n / 4096)));
  auto work = [&](size_t from, size_t to) {
    Mac mac(seed);
    for (size_t i = from; i < to; ++i) {
      const Digest d = mac.of(refs[i]);
      uint64_t v = 0;
      for (int b = 0; b < 8; ++b) v = (v << 8) | d[b];
      head[i] = v;
    }
  };
  std::vector<std::thread> helpers;
  const size_t per = (n + threads - 1) / std::max(1u, threads);
  for (unsigned t = 1; t < threads; ++t) {
    helpers.emplace_back(work, std::min(n, t * per), std::min(n, (t + 1) * per));
  }
  work(0, std::min(n, per));
  for (std::thread& h : helpers) h.join();

  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  Mac mac(seed);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (head[a] != head[b]) return head[a] < head[b];
    const Digest da = mac.of(refs[a]), db = mac.of(refs[b]);
    const int c = std::memcmp(da.data(), db.data(), da.size());
    return c != 0 ? c < 0 : a < b;
  });
  return order;
}

}  // namespace anteroom
