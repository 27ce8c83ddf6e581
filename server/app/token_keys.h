// ES256 signing keys: P-256 keys in OpenSSL 3 EVP form, their public JWK and kid, and where
// they come from (a PEM file given with --token-key, or DATA_DIR/token-key.pem created once
// with mode 0600). JWS ES256 signatures are the raw 64 bytes R || S (RFC 7518 section 3.4),
// not OpenSSL's DER.
//
// kid: the key's RFC 7638 JWK thumbprint (base64url of SHA-256 of
// {"crv":"P-256","kty":"EC","x":...,"y":...}), so the same key has the same kid on every node
// and anyone can recompute it from the JWKS.
//
// Thread safety: an EcKey is immutable after construction; sign and verify from any thread.
#pragma once

#include <openssl/types.h>

#include <boost/json/object.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "engine/status.h"

namespace anteroom {

class EcKey {
 public:
  // A fresh P-256 private key.
  static Result<EcKey> generate();
  // A PEM key (PKCS#8, SEC1 "EC PRIVATE KEY", or, unless `need_private`, a public key
  // "PUBLIC KEY"). It must be a P-256 key; `what` names the source in errors.
  static Result<EcKey> from_pem(std::string_view pem, const std::string& what, bool need_private);
  // The same from a file; errors name the file and say why it cannot be read.
  static Result<EcKey> read_file(const std::string& path, bool need_private);

  bool has_private() const { return has_private_; }
  // PKCS#8 PEM of the private key (empty for a public-only key).
  std::string private_pem() const;
  // The public key as PEM ("PUBLIC KEY", SubjectPublicKeyInfo).
  std::string public_pem() const;
  const std::string& kid() const { return kid_; }
  // {"kty":"EC","crv":"P-256","x":...,"y":...,"kid":...,"alg":"ES256","use":"sig"}
  boost::json::object jwk() const;
  // The raw R || S signature (64 bytes) of SHA-256(input); empty if OpenSSL fails (or the key
  // is public-only).
  std::string sign(std::string_view input) const;
  // Whether `signature` (raw R || S, 64 bytes) signs `input` under this key.
  bool verify(std::string_view input, std::string_view signature) const;

 private:
  EcKey() = default;
  static Result<EcKey> from_pkey(EVP_PKEY* pkey, const std::string& what);  // takes `pkey`

  std::shared_ptr<EVP_PKEY> key_;
  bool has_private_ = false;
  std::string x_, y_;  // base64url of the 32-byte coordinates
  std::string kid_;
};

// DATA_DIR/token-key.pem: read if it exists, else generated and written with mode 0600
// (O_EXCL, fsync). `created` tells which.
Result<EcKey> load_or_create_token_key(const std::string& data_dir, bool* created = nullptr);

}  // namespace anteroom
