// The proxies in front of the server (--trusted-proxy): which peers carry many visitors.
#pragma once

#include <string>
#include <vector>

#include "server/transport/address_counts.h"
#include "server/transport/beast.h"

namespace anteroom {

class TrustedProxies {
 public:
  // `cidrs` were checked by parse_options.
  explicit TrustedProxies(const std::vector<std::string>& cidrs);
  bool contains(const net::ip::address& a) const;
  bool empty() const { return v4_.empty() && v6_.empty(); }

 private:
  std::vector<net::ip::network_v4> v4_;
  std::vector<net::ip::network_v6> v6_;
};

}  // namespace anteroom
