// A question of the forward-auth gate on its way (forward_auth.cc asks, gate_answers.cc
// answers): the request the proxy asked about, the room, and how to answer.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "server/app/api.h"
#include "server/app/gate_index.h"

namespace anteroom {

// The request the proxy asks about.
struct GateOriginal {
  std::string method;
  std::string proto;       // "http" or "https"; empty: not said
  std::string host;        // as asked, lower case (a port stays)
  std::string target;      // path and query as the visitor sent them
  bool nginx_way = false;  // X-Original-*: nginx and ingress-nginx take only 2xx, 401 and 403
};

// What a gate decision needs once the admission check comes back, on whatever thread.
struct Api::GateAsk {
  std::shared_ptr<const GateIndex> index;  // holds `room`
  const GateIndex::Room* room = nullptr;
  GateOriginal o;
  bool browser = false;
  std::string client;
  std::string base;           // scheme://host of the site (or --public-url), for absolute Locations
  bool pass_cookies = false;  // the 200 may carry the cookie: nginx's way, or gate_cookies pass
  std::string fast_host;      // nginx asked for a fast pass for this host (fast_pass.h)
};

// The gate's answers: allowed (exactly 200, as Envoy asks, with X-Anteroom-Visitor always
// there), a redirect, and the pieces of Locations and cookies.
ApiResponse gate_allowed(std::string_view visitor);
ApiResponse gate_redirect(const std::string& location);
std::string percent_encode(std::string_view s);
std::string random_cookie_key();  // a bound admission's key, cookie-safe
// 429 in_line JSON with Retry-After: what any client that is not a browser gets.
ApiResponse in_line_answer(std::string_view room);

}  // namespace anteroom
