#include "server/app/cross_site.h"

#include <algorithm>
#include <cctype>

namespace anteroom {
namespace {

bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// A host and port as an origin or a Host header names them: the host lowercased, the port
// given or the scheme's default ("" when neither tells).
struct Authority {
  std::string host;
  std::string port;
  bool operator==(const Authority&) const = default;
};

std::string default_port(std::string_view scheme) {
  if (same_text(scheme, "https")) return "443";
  if (same_text(scheme, "http")) return "80";
  return "";
}

// "host[:port]" or "[v6][:port]", the port defaulting to `default_port`.
Authority authority(std::string_view a, const std::string& fallback_port) {
  Authority out;
  std::string_view host = a, port;
  if (a.starts_with('[')) {
    const size_t close = a.find(']');
    host = a.substr(0, close == std::string_view::npos ? a.size() : close + 1);
    if (close != std::string_view::npos && close + 1 < a.size() && a[close + 1] == ':') {
      port = a.substr(close + 2);
    }
  } else if (const size_t colon = a.rfind(':'); colon != std::string_view::npos) {
    host = a.substr(0, colon);
    port = a.substr(colon + 1);
  }
  for (char c : host) out.host += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  out.port = port.empty() ? fallback_port : std::string(port);
  return out;
}

// The scheme and authority of "scheme://authority[/...]"; false if it is not such a URL.
bool split_url(std::string_view url, std::string_view* scheme, std::string_view* rest) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) return false;
  *scheme = url.substr(0, sep);
  *rest = url.substr(sep + 3);
  *rest = rest->substr(0, rest->find_first_of("/?#"));
  return !rest->empty();
}

}  // namespace

bool from_another_site(const SiteHeaders& h, std::string_view public_url,
                       const std::vector<std::string>& allow_origins) {
  // An --allow-origin matches as an origin: scheme, host and port, a default port written
  // out or not (browsers leave it out of Origin).
  const auto allowed = [&] {
    std::string_view scheme, rest;
    if (!split_url(h.origin, &scheme, &rest)) return false;
    const Authority origin = authority(rest, default_port(scheme));
    return std::any_of(allow_origins.begin(), allow_origins.end(), [&](const std::string& o) {
      std::string_view s, r;
      return split_url(o, &s, &r) && same_text(s, scheme) &&
             authority(r, default_port(s)) == origin;
    });
  };
  if (same_text(h.sec_fetch_site, "same-origin") || same_text(h.sec_fetch_site, "none")) {
    return false;  // this very origin, or a typed URL or bookmark
  }
  if (same_text(h.sec_fetch_site, "cross-site")) return !allowed();
  // "same-site" (a sibling subdomain, another port) and browsers that send no Sec-Fetch-Site
  // (plain HTTP to another host): the Origin decides.
  if (h.origin.empty()) return !h.sec_fetch_site.empty();  // a browser's write names its origin
  if (allowed()) return false;
  std::string_view scheme, rest;
  if (!split_url(h.origin, &scheme, &rest)) return true;  // "null" (a sandboxed page), junk
  if (!same_text(scheme, "http") && !same_text(scheme, "https")) return true;
  if (rest.size() != h.origin.size() - scheme.size() - 3) return true;  // a path: not an origin
  const Authority origin = authority(rest, default_port(scheme));
  // With --public-url, this site is that one alone: a Host header can be anything (a page
  // on a rebound DNS name sends its own).
  std::string_view public_scheme, public_rest;
  if (split_url(public_url, &public_scheme, &public_rest)) {
    return !same_text(public_scheme, scheme) ||
           !(authority(public_rest, default_port(public_scheme)) == origin);
  }
  for (std::string_view here : {h.host, h.forwarded_host}) {
    if (!here.empty() && authority(here, default_port(scheme)) == origin) return false;
  }
  return true;
}

std::string check_origin(std::string_view origin) {
  const size_t sep = origin.find("://");
  if (sep == std::string_view::npos ||
      (origin.substr(0, sep) != "http" && origin.substr(0, sep) != "https")) {
    return "must start with http:// or https://";
  }
  const std::string_view authority = origin.substr(sep + 3);
  if (authority.empty() || authority.find_first_of("/?#@ ") != std::string_view::npos) {
    return "must be scheme://host[:port] with nothing after (an origin, as browsers send it)";
  }
  return "";
}

}  // namespace anteroom
