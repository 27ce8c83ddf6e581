// Token verification (server/app/token.h, token_keys.h). The first byte picks how the rest
// is read (its top bit picks the ES256 signer over the HS256 one in mode 2):
//   0: a token as a client would send it: TokenSigner::verify with an HS256 and an ES256
//      signer (alg none, algorithm confusion, unknown kids), verify_hs256 and
//      user_token_names, and base64url_decode on each part (what decodes must encode back
//      to the same text: the decoder takes only canonical base64url);
//   1: "header JSON \n payload JSON", signed here with the secret, so the claim checks past
//      the signature see fuzzed JSON;
//   2: "ticket \n room \n user \n key hash": claims signed by TokenSigner::sign must verify
//      to the same claims whenever the names are ones the server would sign;
//   3: a PEM key, as --token-key and --token-key-previous read it (EcKey::from_pem).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/model.h"
#include "server/app/token.h"
#include "server/app/token_keys.h"

namespace anteroom::fuzz {
namespace {

constexpr std::string_view kSecret = "fuzz-token-secret-0123456789abcdefghij";
constexpr int64_t kNow = 1'767'225'600;  // 2026-01-01

void check_base64url(std::string_view text) {
  auto bytes = base64url_decode(text);
  if (bytes && base64url_encode(*bytes) != text) __builtin_trap();
}

// One ES256 key for the process (made once: key generation is slow).
const TokenSigner& es256() {
  static const TokenSigner* signer = new TokenSigner(EcKey::generate().value());
  return *signer;
}

void verify_all(const TokenSigner& signer, std::string_view token) {
  TokenError why{};
  auto claims = signer.verify(token, "fuzz", kNow, &why);
  if (!claims) (void)token_error_text(why);
  (void)es256().verify(token, "fuzz", kNow, &why);
  (void)verify_hs256(token, kSecret, &why);
  (void)user_token_names(token, kSecret, "fuzz-user", "fuzz", kNow);
}

// The next part of *in up to '\n' (all of it if there is none).
std::string_view take_line(std::string_view* in) {
  const size_t end = in->find('\n');
  std::string_view line = in->substr(0, end);
  *in = end == std::string_view::npos ? std::string_view{} : in->substr(end + 1);
  return line;
}

bool lower_hex(std::string_view s) {
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

void round_trip(const TokenSigner& signer, std::string_view in) {
  TokenClaims c;
  c.ticket = std::string(take_line(&in));
  c.room = std::string(take_line(&in));
  c.user = std::string(take_line(&in));
  c.key_hash = std::string(take_line(&in));
  c.issued_at = kNow - 10;
  c.expires_at = kNow + 60;
  auto back = signer.verify(signer.sign(c), c.room, kNow);
  const bool signable = valid_room_name(c.room) && (c.ticket.empty() || valid_user(c.ticket)) &&
                        (c.user.empty() || valid_user(c.user)) &&
                        (c.key_hash.empty() || (c.key_hash.size() == 64 && lower_hex(c.key_hash)));
  if (!signable) return;
  // ES256 may hand out a token it signed earlier for the same claims with an earlier iat.
  if (!back || back->ticket != c.ticket || back->room != c.room || back->user != c.user ||
      back->key_hash != c.key_hash || back->expires_at != c.expires_at ||
      (signer.alg() == TokenAlg::kHS256 && back->issued_at != c.issued_at)) {
    __builtin_trap();
  }
}

}  // namespace
}  // namespace anteroom::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace anteroom;
  using namespace anteroom::fuzz;
  if (size == 0) return 0;
  static const TokenSigner signer{std::string(kSecret)};
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      verify_all(signer, in);
      for (size_t from = 0;;) {  // each dot-separated part
        const size_t dot = in.find('.', from);
        check_base64url(in.substr(from, dot - from));
        if (dot == std::string_view::npos) break;
        from = dot + 1;
      }
      break;
    case 1: {
      std::string_view header = take_line(&in);
      std::string token = base64url_encode(header) + "." + base64url_encode(in);
      token += "." + base64url_encode(hmac_sha256(kSecret, token));
      verify_all(signer, token);
      break;
    }
    case 2:
      round_trip(data[0] >= 128 ? es256() : signer, in);
      break;
    default:
      (void)EcKey::from_pem(in, "fuzz", false);
  }
  return 0;
}
