#include "server/app/gate_links.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <boost/json.hpp>
#include <memory>

#include "server/app/jws.h"
#include "server/app/wait_page.h"

namespace anteroom {
namespace json = boost::json;

namespace {

std::string claim(const json::object& o, const char* k) {
  const json::string* s = string_claim(o, k);
  return s == nullptr ? std::string() : std::string(*s);
}

// The admission cookie rides in the link sealed (AES-256-GCM under a key of its own derived
// from the link key): a link left in a log or a browser's history is spent once, and what
// it carried must not be readable from it afterwards.
constexpr size_t kNonce = 12;
constexpr size_t kTag = 16;

std::string seal_key(std::string_view key) {
  return hmac_sha256(key, "anteroom enter link cookie");  // 32 bytes
}

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

std::string seal(std::string_view key, std::string_view plain) {
  std::string out(kNonce + plain.size() + kTag, '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  if (RAND_bytes(bytes, kNonce) != 1) std::abort();
  const std::string k = seal_key(key);
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int len = 0;
  if (!ctx ||
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(k.data()), bytes) != 1 ||
      EVP_EncryptUpdate(ctx.get(), bytes + kNonce, &len,
                        reinterpret_cast<const unsigned char*>(plain.data()),
                        static_cast<int>(plain.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), bytes + kNonce + len, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTag, bytes + kNonce + plain.size()) !=
          1) {
    std::abort();
  }
  return base64url_encode(out);
}

std::optional<std::string> open_sealed(std::string_view key, std::string_view text) {
  auto in = base64url_decode(text);
  if (!in || in->size() < kNonce + kTag) return std::nullopt;
  const size_t n = in->size() - kNonce - kTag;
  auto* bytes = reinterpret_cast<unsigned char*>(in->data());
  const std::string k = seal_key(key);
  std::string plain(n, '\0');
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  int len = 0;
  if (!ctx ||
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(k.data()), bytes) != 1 ||
      EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &len,
                        bytes + kNonce, static_cast<int>(n)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTag, bytes + kNonce + n) != 1 ||
      EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()) + len, &len) !=
          1) {
    return std::nullopt;
  }
  return plain;
}

}  // namespace

std::string make_enter_link(std::string_view key, const EnterLink& link) {
  json::object c;
  c["typ"] = "enter";
  c["room"] = link.room;
  if (!link.cookie.empty()) c["c"] = seal(key, link.cookie);
  if (!link.pass.empty()) c["pass"] = link.pass;
  c["ret"] = link.ret;
  c["exp"] = link.expires_at;
  c["jti"] = link.id;
  return sign_hs256(c, key);
}

std::optional<EnterLink> read_enter_link(std::string_view key, std::string_view token,
                                         int64_t now_s) {
  auto o = verify_hs256(token, key, nullptr);
  if (!o || claim(*o, "typ") != "enter") return std::nullopt;
  EnterLink l;
  l.room = claim(*o, "room");
  if (const std::string sealed = claim(*o, "c"); !sealed.empty()) {
    auto cookie = open_sealed(key, sealed);
    if (!cookie) return std::nullopt;
    l.cookie = std::move(*cookie);
  }
  l.pass = claim(*o, "pass");
  l.ret = safe_return_url(claim(*o, "ret"));
  l.id = claim(*o, "jti");
  auto exp = number_claim(*o, "exp");
  if (!exp || *exp <= now_s || l.room.empty() || l.id.empty() ||
      l.cookie.empty() == l.pass.empty()) {
    return std::nullopt;
  }
  l.expires_at = *exp;
  return l;
}

std::string make_pass(std::string_view key, const PassClaims& pass, PassForm form) {
  json::object c;
  c["typ"] = form == PassForm::kLink ? "pass" : "passcookie";
  c["room"] = pass.room;
  c["pid"] = pass.id;
  c["exp"] = pass.expires_at;
  return sign_hs256(c, key);
}

std::optional<PassClaims> read_pass(std::string_view key, std::string_view token, int64_t now_s,
                                    PassForm form) {
  auto o = verify_hs256(token, key, nullptr);
  if (!o || claim(*o, "typ") != (form == PassForm::kLink ? "pass" : "passcookie")) {
    return std::nullopt;
  }
  PassClaims p{claim(*o, "room"), claim(*o, "pid"), 0};
  auto exp = number_claim(*o, "exp");
  if (!exp || *exp <= now_s || p.room.empty() || p.id.empty()) return std::nullopt;
  p.expires_at = *exp;
  return p;
}

}  // namespace anteroom
