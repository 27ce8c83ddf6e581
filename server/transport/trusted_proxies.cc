#include "server/transport/trusted_proxies.h"

#include <algorithm>

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

std::string forwarded_for(const http::fields& fields) {
  std::string out;
  const auto [first, last] = fields.equal_range("X-Forwarded-For");
  for (auto f = first; f != last; ++f) {
    if (!out.empty()) out += ',';
    out.append(f->value().data(), f->value().size());
  }
  return out;
}

net::ip::address TrustedProxies::client_ip(const net::ip::address& peer,
                                           std::string_view forwarded) const {
  net::ip::address client = peer;
  if (contains(peer)) {
    while (!forwarded.empty()) {
      const size_t comma = forwarded.rfind(',');
      std::string_view item =
          comma == std::string_view::npos ? forwarded : forwarded.substr(comma + 1);
      forwarded = comma == std::string_view::npos ? std::string_view{} : forwarded.substr(0, comma);
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
      beast::error_code ec;
      const net::ip::address a = net::ip::make_address(item, ec);
      if (ec) break;
      client = a;
      if (!contains(a)) break;
    }
  }
  if (client.is_v6() && client.to_v6().is_v4_mapped()) {
    client = net::ip::make_address_v4(net::ip::v4_mapped, client.to_v6());
  }
  return client;
}

std::string TrustedProxies::key_of(const net::ip::address& client) {
  if (client.is_v4()) {
    const auto b = client.to_v4().to_bytes();
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  // An IPv6 client is its /64: one subscriber is usually given a whole /64, and counting each
  // address apart would let it join as often as it has addresses.
  const auto b = client.to_v6().to_bytes();
  return {reinterpret_cast<const char*>(b.data()), 8};
}

AddressKey connection_key(const net::ip::address& peer) {
  if (peer.is_v4()) return net::ip::make_address_v6(net::ip::v4_mapped, peer.to_v4()).to_bytes();
  const net::ip::address_v6 v6 = peer.to_v6();
  AddressKey k = v6.to_bytes();
  if (!v6.is_v4_mapped()) std::fill(k.begin() + 8, k.end(), 0);  // its /64, as key_of
  return k;
}

}  // namespace anteroom
