// What the forward-auth gate compares (docs/integrations.md): a request path made plain
// before any rule looks at it, and client networks.
//
// A path is percent-decoded (%2F too: an encoded slash is a slash to most origins), every
// backslash read as a slash (some origins do), path parameters cut from each segment
// ("/a;jsessionid=1/b" is "/a/b", "..;x" is ".."), empty segments dropped ("//" is "/"),
// and the dot segments removed as RFC 3986 section 5.2.4 says: "/static/../checkout" is
// "/checkout", so it meets the rules of /checkout and not those of /static/. A path that
// decodes to a NUL or to bytes that are not UTF-8 has no plain form.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace anteroom {

// The plain form of a request target's path (the query and fragment cut off first), or
// nullopt. Always starts with "/".
std::optional<std::string> plain_path(std::string_view target);

// A network: an IPv4 CIDR, or an IPv6 one of at most /64 (the server knows a client's IPv6
// address to its /64: ApiRequest::client).
struct Network {
  std::array<uint8_t, 8> bytes{};
  uint8_t size = 0;  // 4 or 8 bytes compared
  uint8_t bits = 0;  // prefix length

  bool contains(std::string_view client) const;  // ApiRequest::client's bytes
  std::string text() const;
};
// "10.0.0.0/8", "192.168.1.7" (/32), "2001:db8::/32", "2001:db8:1:2::" (/64); nullopt with
// *why set for anything else, an IPv6 prefix over /64 included.
std::optional<Network> parse_network(std::string_view text, std::string* why);

}  // namespace anteroom
