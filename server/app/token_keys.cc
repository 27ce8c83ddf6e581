#include "server/app/token_keys.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <boost/json.hpp>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include "server/app/token.h"

namespace anteroom {
namespace json = boost::json;

namespace {

constexpr size_t kCoordinate = 32;  // bytes of a P-256 coordinate, and of R and of S

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct SigFree {
  void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Bn = std::unique_ptr<BIGNUM, BnFree>;
using Sig = std::unique_ptr<ECDSA_SIG, SigFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

// The last OpenSSL error as text (and the queue cleared), for messages.
std::string openssl_error() {
  unsigned long e = ERR_get_error();  // NOLINT(google-runtime-int): OpenSSL's type
  ERR_clear_error();
  if (e == 0) return "no OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

// A big number as exactly `n` big-endian bytes.
std::string padded(const BIGNUM* b, size_t n) {
  std::string out(n, '\0');
  if (BN_bn2binpad(b, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) !=
      static_cast<int>(n)) {
    return {};
  }
  return out;
}

std::string errno_text() { return std::error_code(errno, std::generic_category()).message(); }

// No passphrase prompt: an encrypted PEM fails to read instead of asking the terminal.
int no_passphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) { return -1; }

}  // namespace

Result<EcKey> EcKey::from_pkey(EVP_PKEY* raw, const std::string& what) {
  EcKey k;
  k.key_.reset(raw, EVP_PKEY_free);
  if (EVP_PKEY_is_a(raw, "EC") != 1) {
    return Status(Code::kInvalidArgument, what + " is not an EC key (it is " +
                                              std::string(EVP_PKEY_get0_type_name(raw) != nullptr
                                                              ? EVP_PKEY_get0_type_name(raw)
                                                              : "of an unknown type") +
                                              "); ES256 needs a P-256 (prime256v1) key");
  }
  char group[64] = {};
  size_t group_len = 0;
  if (EVP_PKEY_get_group_name(raw, group, sizeof group, &group_len) != 1) {
    return Status(Code::kInvalidArgument, what + ": cannot read the key's curve");
  }
  if (std::string_view(group) != "prime256v1") {
    return Status(Code::kInvalidArgument, what + " is a key on curve " + group +
                                              "; ES256 needs P-256 (prime256v1, secp256r1)");
  }
  BIGNUM* x = nullptr;
  BIGNUM* y = nullptr;
  BIGNUM* d = nullptr;
  const bool have_x = EVP_PKEY_get_bn_param(raw, OSSL_PKEY_PARAM_EC_PUB_X, &x) == 1;
  Bn owned_x(x);
  const bool have_y = EVP_PKEY_get_bn_param(raw, OSSL_PKEY_PARAM_EC_PUB_Y, &y) == 1;
  Bn owned_y(y);
  if (!have_x || !have_y) {
    return Status(Code::kInvalidArgument, what + ": the key has no public point");
  }
  k.has_private_ = EVP_PKEY_get_bn_param(raw, OSSL_PKEY_PARAM_PRIV_KEY, &d) == 1;
  BN_clear_free(d);
  ERR_clear_error();  // the failed lookup of a public key's private part
  const std::string xb = padded(x, kCoordinate);
  const std::string yb = padded(y, kCoordinate);
  if (xb.empty() || yb.empty()) return Status(Code::kInvalidArgument, what + ": bad public point");
  k.x_ = base64url_encode(xb);
  k.y_ = base64url_encode(yb);
  // RFC 7638: the required members in lexicographic order, no white space.
  const std::string members =
      R"({"crv":"P-256","kty":"EC","x":")" + k.x_ + R"(","y":")" + k.y_ + R"("})";
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(members.data()), members.size(), digest);
  k.kid_ = base64url_encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
  return k;
}

Result<EcKey> EcKey::generate() {
  EVP_PKEY* raw = EVP_EC_gen("P-256");
  if (raw == nullptr) {
    return Status(Code::kUnavailable, "cannot generate a P-256 key: " + openssl_error());
  }
  return from_pkey(raw, "the generated key");
}

Result<EcKey> EcKey::from_pem(std::string_view pem, const std::string& what, bool need_private) {
  if (pem.size() > (1 << 20)) return Status(Code::kInvalidArgument, what + " is too large");
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return Status(Code::kUnavailable, "out of memory reading " + what);
  EVP_PKEY* raw = PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr);
  if (raw == nullptr && !need_private) {
    ERR_clear_error();
    bio.reset(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    if (!bio) return Status(Code::kUnavailable, "out of memory reading " + what);
    raw = PEM_read_bio_PUBKEY(bio.get(), nullptr, no_passphrase, nullptr);
  }
  if (raw == nullptr) {
    const std::string why = openssl_error();
    return Status(Code::kInvalidArgument,
                  what + " is not a PEM " +
                      (need_private ? "private key" : "private or public key") +
                      " (unencrypted PKCS#8, or SEC1 \"EC PRIVATE KEY\"; make one with `openssl "
                      "genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`): " +
                      why);
  }
  auto key = from_pkey(raw, what);
  if (key.is_ok() && need_private && !key->has_private()) {
    return Status(Code::kInvalidArgument, what + " holds no private key");
  }
  return key;
}

Result<EcKey> EcKey::read_file(const std::string& path, bool need_private) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status(Code::kInvalidArgument, "cannot read " + path + ": " + errno_text());
  }
  std::stringstream s;
  s << in.rdbuf();
  if (in.bad()) return Status(Code::kInvalidArgument, "cannot read " + path + ": " + errno_text());
  return from_pem(s.str(), path, need_private);
}

std::string EcKey::private_pem() const {
  if (!has_private_) return {};
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return {};
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);  // NOLINT(google-runtime-int)
  return std::string(data, static_cast<size_t>(n));
}

std::string EcKey::public_pem() const {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1) return {};
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);  // NOLINT(google-runtime-int)
  return std::string(data, static_cast<size_t>(n));
}

json::object EcKey::jwk() const {
  json::object o;
  o["kty"] = "EC";
  o["crv"] = "P-256";
  o["x"] = x_;
  o["y"] = y_;
  o["kid"] = kid_;
  o["alg"] = "ES256";
  o["use"] = "sig";
  return o;
}

std::string EcKey::sign(std::string_view input) const {
  if (!has_private_) return {};
  MdCtx ctx(EVP_MD_CTX_new());
  unsigned char der[80];  // an ECDSA P-256 DER signature is at most 72 bytes
  size_t der_len = sizeof der;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), der, &der_len, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size()) != 1) {
    ERR_clear_error();
    return {};
  }
  const unsigned char* p = der;
  Sig sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der_len)));  // NOLINT(google-runtime-int)
  if (!sig) return {};
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig.get(), &r, &s);
  std::string out = padded(r, kCoordinate);
  std::string s_bytes = padded(s, kCoordinate);
  if (out.empty() || s_bytes.empty()) return {};
  return out + s_bytes;
}

bool EcKey::verify(std::string_view input, std::string_view signature) const {
  if (signature.size() != 2 * kCoordinate) return false;
  const auto* raw = reinterpret_cast<const unsigned char*>(signature.data());
  Bn r(BN_bin2bn(raw, kCoordinate, nullptr));
  Bn s(BN_bin2bn(raw + kCoordinate, kCoordinate, nullptr));
  Sig sig(ECDSA_SIG_new());
  if (!r || !s || !sig || ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1) return false;
  (void)r.release();  // owned by sig now
  (void)s.release();
  unsigned char der[80];
  unsigned char* out = der;
  const int der_len = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (der_len <= 0 || der_len > static_cast<int>(sizeof der) ||
      i2d_ECDSA_SIG(sig.get(), &out) != der_len) {
    return false;
  }
  MdCtx ctx(EVP_MD_CTX_new());
  const bool ok =
      ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) == 1 &&
      EVP_DigestVerify(ctx.get(), der, static_cast<size_t>(der_len),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  ERR_clear_error();
  return ok;
}

Result<EcKey> load_or_create_token_key(const std::string& data_dir, bool* created) {
  const std::string path = data_dir + "/token-key.pem";
  if (::access(path.c_str(), F_OK) == 0) {
    if (created != nullptr) *created = false;
    return EcKey::read_file(path, true);
  }
  if (::mkdir(data_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status(Code::kUnavailable,
                  "cannot create data directory " + data_dir + ": " + errno_text());
  }
  auto key = EcKey::generate();
  if (!key.is_ok()) return key.status();
  const std::string pem = key->private_pem();
  if (pem.empty()) return Status(Code::kUnavailable, "cannot write the new key as PEM");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return Status(Code::kUnavailable, "cannot create " + path + ": " + errno_text());
  const bool ok =
      ::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());  // a half-written key would fail every later start
    return Status(Code::kUnavailable, "cannot write " + path);
  }
  if (created != nullptr) *created = true;
  return key;
}

}  // namespace anteroom
