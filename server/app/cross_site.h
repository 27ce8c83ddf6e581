// Whether a browser request comes from another site (a form, a script or a WebSocket on a
// page elsewhere), so that one that would change state is refused 403 cross_site: a form on
// another site cannot join the line for its visitors (burning their address's join quota,
// taking names). Clients that send neither Origin nor Sec-Fetch-Site (curl, services) are not
// browsers and pass.
//
//   Sec-Fetch-Site: same-origin, none   this site (none: a typed URL, a bookmark)
//   Sec-Fetch-Site: cross-site          another site, unless Origin is an --allow-origin
//   Sec-Fetch-Site: same-site, or none sent (plain HTTP to another host): the Origin decides.
//       It must be an --allow-origin, or name this site exactly (scheme, host and port):
//       --public-url when it is set (a Host header proves nothing: a rebound DNS name sends its
//       own), else the Host the request was made to or a trusted proxy's X-Forwarded-Host.
//       A sibling subdomain or another port is another site here; "null" (a sandboxed page) is
//       one too.
//
// Hosts compare case-insensitively; a port left out is its scheme's default.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace anteroom {

struct SiteHeaders {
  std::string_view origin;          // Origin
  std::string_view sec_fetch_site;  // Sec-Fetch-Site
  std::string_view host;            // Host
  std::string_view forwarded_host;  // X-Forwarded-Host, only from a trusted proxy
};

bool from_another_site(const SiteHeaders& h, std::string_view public_url,
                       const std::vector<std::string>& allow_origins);

// An --allow-origin value: scheme://host[:port], nothing after. Empty if fine, else why not.
std::string check_origin(std::string_view origin);

}  // namespace anteroom
