#include "loadgen/draw_check.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <utility>

namespace anteroom::loadgen {

namespace json = boost::json;

namespace {

std::string hex(const unsigned char* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = kDigits[data[i] >> 4];
    s[2 * i + 1] = kDigits[data[i] & 15];
  }
  return s;
}

bool is_lower_hex(std::string_view s) {
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

bool parse_draw(std::string_view body, Draw* out) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return false;
  const json::object& o = v.get_object();
  const json::value* seed = o.if_contains("seed");
  const json::value* commit = o.if_contains("seed_sha256");
  const json::value* order = o.if_contains("order");
  if (seed == nullptr || !seed->is_string() || commit == nullptr || !commit->is_string() ||
      order == nullptr || !order->is_array()) {
    return false;
  }
  *out = Draw{};
  out->seed = std::string(seed->get_string());
  out->seed_sha256 = std::string(commit->get_string());
  if (const json::value* refs = o.if_contains("refs_sha256"); refs != nullptr && refs->is_string())
    out->refs_sha256 = std::string(refs->get_string());
  out->order.reserve(order->get_array().size());
  for (const json::value& ref : order->get_array()) {
    if (!ref.is_string()) return false;
    out->order.emplace_back(ref.get_string());
  }
  return true;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), d, &n, EVP_sha256(), nullptr) != 1) return "";
  return hex(d, n);
}

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  // OpenSSL's one-shot HMAC: nothing of the server's code (engine/fair_draw.cc keys an
  // EVP_MAC once and duplicates it), so the two can only agree by both being right.
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), d,
           &n) == nullptr) {
    return "";
  }
  return hex(d, n);
}

bool from_hex(std::string_view h, std::string* bytes) {
  if (h.size() % 2 != 0) return false;
  bytes->clear();
  for (size_t i = 0; i < h.size(); i += 2) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(h.data() + i, h.data() + i + 2, v, 16);
    if (ec != std::errc() || end != h.data() + i + 2) return false;
    bytes->push_back(static_cast<char>(v));
  }
  return true;
}

std::string verify_draw(const Draw& draw, const std::string& commitment,
                        const std::string& refs_commitment) {
  std::string seed;
  if (!from_hex(draw.seed, &seed) || seed.size() != 32) {
    return "the seed is not 32 bytes of hex: '" + draw.seed + "'";
  }
  const std::string digest = sha256_hex(seed);
  if (digest != commitment) {
    return "SHA-256(seed) is " + digest + ", the commitment was " + commitment;
  }
  if (draw.seed_sha256 != commitment) {
    return "the draw says seed_sha256 " + draw.seed_sha256 + ", the commitment was " + commitment;
  }
  std::vector<std::string> sorted = draw.order;
  std::sort(sorted.begin(), sorted.end());
  std::string set_text;
  for (const std::string& ref : sorted) set_text += ref + "\n";
  const std::string set = sha256_hex(set_text);
  if (draw.refs_sha256 != set) {
    return "the draw's refs_sha256 " + draw.refs_sha256 + " is not the SHA-256 of its refs " + set;
  }
  if (!refs_commitment.empty() && refs_commitment != set) {
    return "the refs drawn hash to " + set + ", the start committed to " + refs_commitment;
  }
  std::vector<std::pair<std::string, size_t>> keyed;  // (HMAC, place in the published order)
  keyed.reserve(draw.order.size());
  for (size_t i = 0; i < draw.order.size(); ++i) {
    const std::string& ref = draw.order[i];
    if (ref.size() != 16 || !is_lower_hex(ref)) return "not a ref: '" + ref + "'";
    keyed.emplace_back(hmac_sha256_hex(seed, ref), i);
  }
  // A stable sort: equal HMACs (equal refs) keep their published order, as the server's do.
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t k = 0; k < keyed.size(); ++k) {
    if (keyed[k].second != k) {
      return "place " + std::to_string(k + 1) + " should be " + draw.order[keyed[k].second] +
             " by its HMAC, the draw has " + draw.order[k];
    }
  }
  return "";
}

uint64_t ref_number(std::string_view ref) {
  uint64_t v = 0;
  if (ref.size() != 16 || !is_lower_hex(ref)) return 0;
  std::from_chars(ref.data(), ref.data() + ref.size(), v, 16);
  return v;
}

}  // namespace anteroom::loadgen
