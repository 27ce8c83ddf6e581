#include "server/transport/trusted_proxies.h"

namespace anteroom {

TrustedProxies::TrustedProxies(const std::vector<std::string>& cidrs) {
  for (const std::string& c : cidrs) {
    beast::error_code ec;
    std::string text = c;
    if (text.find('/') == std::string::npos)
      text += text.find(':') == std::string::npos ? "/32" : "/128";
    if (text.find(':') != std::string::npos) {
      auto n = net::ip::make_network_v6(text, ec);
      if (!ec) v6_.push_back(n);
    } else {
      auto n = net::ip::make_network_v4(text, ec);
      if (!ec) v4_.push_back(n);
    }
  }
}

bool TrustedProxies::contains(const net::ip::address& a) const {
  if (a.is_v4() || (a.is_v6() && a.to_v6().is_v4_mapped())) {
    const auto v4 = a.is_v4() ? a.to_v4() : net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6());
    for (const auto& n : v4_) {
      if (net::ip::network_v4(v4, 32).is_subnet_of(n) || n.address() == v4) return true;
    }
    return false;
  }
  for (const auto& n : v6_) {
    if (net::ip::network_v6(a.to_v6(), 128).is_subnet_of(n) || n.address() == a.to_v6())
      return true;
  }
  return false;
}

}  // namespace anteroom
