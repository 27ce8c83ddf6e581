#include "server/app/fast_pass.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>

#include "server/app/jws.h"

namespace anteroom {

std::string fast_pass_value(std::string_view secret, std::string_view host, int64_t expires_at) {
  const std::string exp = std::to_string(expires_at);
  std::string text = exp;
  text += ' ';  // else "1" + "2shop.example" and "12" + "shop.example" would hash alike
  text += host;
  text += ' ';
  text += secret;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(text.data(), text.size(), md, &len, EVP_md5(), nullptr) != 1) return {};
  return base64url_encode(std::string_view(reinterpret_cast<const char*>(md), len)) + "." + exp;
}

std::string fast_pass_host(std::string_view host) {
  if (host.empty() || host.size() > 255) return {};
  std::string out;
  for (char c : host) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) == 0 && c != '.' && c != '-') return {};
    out += static_cast<char>(std::tolower(u));
  }
  return out;
}

}  // namespace anteroom
