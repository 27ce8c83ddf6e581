// A room's settings for the forward-auth gate and for who may join (docs/api.md, "Rooms"):
// which requests the room protects (match), which pass without a ticket (bypass), what the
// gate and the waiting page answer, whether the gate admits by itself while there is room,
// invites, and the lanes' names. Read from a room's PUT body (400 naming the field), kept
// in RoomConfig::gate as JSON this file writes, and read back from there.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model.h"
#include "server/app/api.h"
#include "server/app/gate_paths.h"

namespace anteroom {

struct MatchRule {
  std::string host;         // lower case, port included if given; empty: any host
  std::string path_prefix;  // a plain path (gate_paths.h); empty: any path
};

// A request fits a rule when it fits every condition the rule sets.
struct BypassRule {
  std::string name;  // the label of anteroom_gate_bypassed_total
  std::string path_prefix, path_suffix;
  uint8_t methods = 0;  // route_table.h's Method bits; 0: any
  std::vector<Network> cidr;
  std::string user_agent;  // lower case; a substring of the User-Agent, any case
  std::string header_name, header_contains;
  std::string cookie;  // a cookie of this name is present
};

struct GateSettings {
  std::vector<MatchRule> match;
  std::vector<BypassRule> bypass;
  unsigned queueing_status_code = 200;  // the waiting page's: 200, 202, 429 or 503
  bool gate_admits = true;
  uint16_t gate_probation_seconds = 30;
  // The gate's own admissions per client address per minute; past it the address gets the
  // page (a cookieless client, or a browser that refuses cookies, would be admitted anew on
  // every request). 0: no cap beyond ip_joins_per_minute.
  uint32_t gate_ip_admits_per_minute = 6;
  bool gate_cookies_pass = false;  // "pass": the cookie on the 200 (else "redirect")
  bool invite_only = false;        // join_requires "invite"
  std::vector<std::string> lane_names;

  static constexpr size_t kMaxMatch = 256, kMaxBypass = 64;

  // Back from RoomConfig::gate (written by to_stored; empty: the defaults).
  static GateSettings from_stored(std::string_view stored);
  std::string to_stored() const;
  // The fields as GET /v1/rooms/{room} shows them, with the lanes' weights.
  void put_fields(boost::json::object& o, const std::vector<uint32_t>& weights) const;
  // The lane named `name`: its index, or JoinRequest::kLastLane when none is.
  uint8_t lane_index(std::string_view name) const;
};

// What a bypass rule looks at in the original request.
struct GateRequest {
  std::string_view method;
  std::string_view path;    // plain (gate_paths.h)
  std::string_view client;  // ApiRequest::client's bytes
  std::string_view user_agent;
  std::string_view cookies;
  const HeaderLookup* headers = nullptr;  // any other header, by name
  std::string_view raw;                   // the path as sent; empty: the same as `path`
};
// Whether `r` fits every condition of `rule`; a path condition must fit both the plain and
// the raw path ("/static/%2e%2e/checkout" is no asset, whatever it decodes to).
bool bypasses(const BypassRule& rule, const GateRequest& r);

// The names of the fields read_gate_fields takes.
bool is_gate_field(std::string_view key);
// Reads the gate's fields of a PUT body into *c (RoomConfig::gate and lanes); the fields a
// body leaves out stay as *c has them. false with *err the 400 answer naming the field.
bool read_gate_fields(const boost::json::object& o, RoomConfig* c, ApiResponse* err);

// Whether a Cookie header holds a cookie named `name`.
bool has_cookie(std::string_view cookies, std::string_view name);

}  // namespace anteroom
