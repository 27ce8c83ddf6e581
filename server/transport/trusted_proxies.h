// The proxies in front of the server (--trusted-proxy): which peers carry many visitors.
#pragma once

#include <string>
#include <vector>

#include "server/transport/address_counts.h"
#include "server/transport/beast.h"

namespace anteroom {

// Every X-Forwarded-For header of a request, joined by commas (in the order they came).
std::string forwarded_for(const http::fields& fields);

// What --max-connections-per-address counts a peer by: an IPv4 address, or an IPv6 address's
// /64 (as the join limiter counts it: one subscriber is usually given a whole /64, and
// counting each address apart would let one /64 take every connection).
AddressKey connection_key(const net::ip::address& peer);

class TrustedProxies {
 public:
  // `cidrs` were checked by parse_options.
  explicit TrustedProxies(const std::vector<std::string>& cidrs);
  bool contains(const net::ip::address& a) const;
  // The client's address as bytes (4 for IPv4; for IPv6 the 8 of its /64): `peer`,
  // or, when `peer` is trusted, the rightmost address of `forwarded` (X-Forwarded-For, every header
  // joined by commas) that is not itself trusted. An entry that does not parse ends the walk: the
  // last trusted hop stands for the client.
  std::string client_of(const net::ip::address& peer, std::string_view forwarded) const {
    return key_of(client_ip(peer, forwarded));
  }
  // The client's whole address (IPv4-mapped IPv6 as IPv4), chosen as client_of says.
  net::ip::address client_ip(const net::ip::address& peer, std::string_view forwarded) const;
  // client_of's bytes of an address client_ip chose.
  static std::string key_of(const net::ip::address& client);
  bool empty() const { return v4_.empty() && v6_.empty(); }

 private:
  std::vector<net::ip::network_v4> v4_;
  std::vector<net::ip::network_v6> v6_;
};

}  // namespace anteroom
