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

// The host of "host[:port]" or "[v6]:port", without the port.
std::string_view host_part(std::string_view authority) {
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    return close == std::string_view::npos ? authority : authority.substr(0, close + 1);
  }
  return authority.substr(0, authority.find(':'));
}

// The authority of "scheme://authority[/...]"; empty if it is not such a URL.
std::string_view authority_of(std::string_view url) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) return {};
  std::string_view rest = url.substr(sep + 3);
  return rest.substr(0, rest.find_first_of("/?#"));
}

}  // namespace

bool from_another_site(const SiteHeaders& h, std::string_view public_url,
                       const std::vector<std::string>& allow_origins) {
  const auto allowed = [&] {
    return std::any_of(allow_origins.begin(), allow_origins.end(),
                       [&](const std::string& o) { return same_text(o, h.origin); });
  };
  if (!h.sec_fetch_site.empty()) {
    if (same_text(h.sec_fetch_site, "cross-site")) return !allowed();
    return false;  // same-origin, same-site, none (typed in, bookmarked)
  }
  if (h.origin.empty()) return false;  // not a browser's cross-origin request
  if (allowed()) return false;
  const std::string_view origin_host = host_part(authority_of(h.origin));
  if (origin_host.empty()) return true;  // "null", or not a URL
  for (std::string_view here : {h.host, h.forwarded_host, authority_of(public_url)}) {
    if (!here.empty() && same_text(host_part(here), origin_host)) return false;
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
