// The one table of HTTP routes (route_table.cc, modelled on a command table): each row is a
// method set and a path pattern with what the server needs to know about it: the name it is
// counted under in /metrics, which listener serves it when --admin-listen gives operators
// their own, whether the operator reserve still serves it, the key it needs, and its
// handler. Api::handle finds the row and does every check the row states before the handler
// runs, so a handler only does its own work. docs/openapi.yaml describes the same routes
// (tests/openapi/routes.mjs holds the two to each other).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "server/app/api.h"
#include "server/app/metrics.h"

namespace anteroom {

// HTTP methods as bits, so that one row takes GET and HEAD; kOther is every other method
// (PATCH, OPTIONS, ...), which only the forward-auth gate's rows take (Envoy asks with the
// visitor's own method) and /wait (nginx's error_page keeps the visitor's).
enum Method : uint8_t { kGet = 1, kHead = 2, kPost = 4, kPut = 8, kDelete = 16, kOther = 32 };
constexpr uint8_t kAnyMethod = kGet | kHead | kPost | kPut | kDelete | kOther;
// The bit of a request's method; kOther for any other method, 0 for none.
uint8_t method_bit(std::string_view method);
// "GET, HEAD, PUT": the Allow header of a method set.
std::string allow_header(uint8_t methods);

// Which listener answers a route when --admin-listen is set (without it, one listener
// answers everything).
enum class Audience : uint8_t { kVisitor, kOperator, kBoth };
// The key a route needs in `Authorization: Bearer`: none; the admin key; the admin or the
// --verify-key; for scraping, either of those or --metrics-key (none on the operator
// listener or with --metrics-public).
enum class Auth : uint8_t { kNone, kAdmin, kVerify, kScrape };

// What a handler gets: the request and the pattern's parameters ({room} already a valid
// room name; {ticket} as given: the engine knows its tickets; {id} likewise; {path}, last in
// a pattern, takes the rest of the path, slashes and all).
struct RouteCall {
  const ApiRequest& req;
  std::string_view query;
  std::string_view room;
  std::string_view ticket;  // {ticket}, {id} or {path}
};

struct RouteRow {
  uint8_t methods;           // Method bits
  std::string_view pattern;  // "/v1/rooms/{room}/tickets/{ticket}": {room}, then {ticket},
                             // {id} or {path}
  Route route;
  const char* name;  // the route label in /metrics
  Audience audience;
  bool reserve;  // still served while the server is down to its operator reserve
  // A GET that changes state (a WebSocket's ENTER joins): refused from another site like a
  // write.
  bool writes;
  Auth auth;
  ApiResponse (*handler)(const Api& api, const RouteCall& call);
};

// Every row, in the order Api::handle tries them (the busiest first).
std::span<const RouteRow> route_table();

// Whether `path` has the shape of `pattern`; fills *room and *ticket from its parameters
// (*ticket: {ticket}, {id} or {path}).
bool match_pattern(std::string_view pattern, std::string_view path, std::string_view* room,
                   std::string_view* ticket);

}  // namespace anteroom
