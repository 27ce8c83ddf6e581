// Whether a browser request comes from another site (a form, a script or a WebSocket on a
// page elsewhere), so that one that would change state is refused 403 cross_site: a form on
// another site cannot join the line for its visitors (burning their address's join quota,
// taking names). Clients that send neither Origin nor Sec-Fetch-Site (curl, services) are not
// browsers and pass.
//
//   Sec-Fetch-Site: cross-site        another site, unless Origin is an --allow-origin
//   Sec-Fetch-Site: same-origin, same-site, none    this site
//   no Sec-Fetch-Site, Origin given   (browsers send no Sec-Fetch-* over plain HTTP to other
//                                     hosts) this site if Origin's host is the Host the
//                                     request was made to (X-Forwarded-Host from a trusted
//                                     proxy), --public-url's host, or an --allow-origin;
//                                     "null" (a sandboxed or privacy-redirected page) is not
//
// Hosts compare case-insensitively without their port (a site ignores ports).
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
