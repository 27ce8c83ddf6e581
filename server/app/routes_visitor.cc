// Api: the visitor routes (join, status, leave, events, WebSocket) and the gate, and how
// a request under /v1/rooms finds its route.
#include <boost/json.hpp>

#include "server/app/api.h"

namespace anteroom {
namespace json = boost::json;

namespace {

// The values of every `name` cookie (at most 8) in a Cookie header.
std::vector<std::string> cookie_values(std::string_view cookies, std::string_view name) {
  std::vector<std::string> out;
  for (size_t i = 0; i < cookies.size() && out.size() < 8;) {
    while (i < cookies.size() && (cookies[i] == ' ' || cookies[i] == ';')) ++i;
    size_t end = cookies.find(';', i);
    if (end == std::string_view::npos) end = cookies.size();
    std::string_view pair = cookies.substr(i, end - i);
    i = end;
    if (pair.size() > name.size() && pair.starts_with(name) && pair[name.size()] == '=') {
      out.emplace_back(pair.substr(name.size() + 1));
    }
  }
  return out;
}

bool any_key_hashes_to(const std::vector<std::string>& keys, const KeyHash& want) {
  bool found = false;
  for (const std::string& k : keys) found |= same_hash(hash_key(k), want);  // no early exit
  return found;
}

}  // namespace

void Api::use_token(std::string_view room, std::string_view token,
                    const std::vector<std::string>& keys, Engine::Then<TicketDetail> then) const {
  TokenError why = TokenError::kMalformed;
  auto claims = tokens_.verify(token, room, now_ms() / 1000, &why);
  if (!claims) return then(Status(Code::kInvalidArgument, token_error_text(why)));
  use_claims(room, *claims, keys, std::move(then));
}

void Api::use_claims(std::string_view room, const TokenClaims& claims,
                     const std::vector<std::string>& keys, Engine::Then<TicketDetail> then) const {
  // Bound admissions (SPEC section 9): the token's cnf, and the ticket's own key (a token
  // from before the binding cannot shed it), checked before the ticket is touched, so a
  // copied token used without its key changes nothing.
  std::optional<KeyHash> bound;
  if (!claims.key_hash.empty()) bound = parse_key_hash(claims.key_hash);
  if (!bound) {
    if (auto d = engine_.describe(room, claims.ticket); d.is_ok()) bound = d->key_hash;
  }
  if (bound && !any_key_hashes_to(keys, *bound)) {
    return then(Status(Code::kInvalidArgument,
                       keys.empty() ? "the admission is bound to a key the request does not carry"
                                    : "the admission is bound to another key"));
  }
  engine_.activate_async(room, claims.ticket, [then = std::move(then)](Result<TicketDetail> d) {
    if (!d.is_ok()) {
      return then(Status(Code::kInvalidArgument,
                         "the admission is no longer valid: " + d.status().message()));
    }
    then(std::move(d));
  });
}

ApiResponse Api::gate_route(std::string_view room, std::string_view cookies) const {
  const std::string name = "anteroom_" + std::string(room);
  std::vector<std::string> tokens = cookie_values(cookies, name);
  const std::vector<std::string> keys = cookie_values(cookies, name + "_key");
  return answer_when([&](const Respond& respond) {
    gate_try(std::string(room), std::move(tokens), keys, 0, respond);
  });
}

// Tries the cookies one after another: the first token that still admits wins. A cookie
// whose signature fails ends the search: signatures cost (ES256: an ECDSA verification each),
// and a visitor's own cookies are not forged. Cookies refused without a check (expired, for
// another room, a kid no longer served) and admissions that ended let the next one try.
void Api::gate_try(const std::string& room, std::vector<std::string> tokens,
                   const std::vector<std::string>& keys, size_t index,
                   const Respond& respond) const {
  auto none = [&] {
    respond(error_response(401, "no_admission", "no valid admission for room '" + room + "'"));
  };
  std::optional<TokenClaims> claims;
  for (; index < tokens.size() && !claims; ++index) {
    TokenError why = TokenError::kMalformed;
    claims = tokens_.verify(tokens[index], room, now_ms() / 1000, &why);
    if (!claims && why == TokenError::kBadSignature) return none();
  }
  if (!claims) return none();
  use_claims(room, *claims, keys,
             [this, room, tokens = std::move(tokens), keys, index,
              respond](const Result<TicketDetail>& used) {
               if (!used.is_ok()) return gate_try(room, tokens, keys, index, respond);
               // The session goes on: a fresh token, valid to the new idle deadline, replaces
               // the cookie, so the visitor is never locked out while using the service.
               ApiResponse res;
               res.status = 204;
               res.headers.emplace_back("Set-Cookie", admission_cookie(room, used->ticket));
               respond(std::move(res));
             });
}

// The admission cookie, set by the server (HttpOnly): the waiting page asks for it once
// admitted, so a stale cookie of an earlier admission is always replaced. Holding the
// ticket id is the credential, as for status; a bound ticket also needs its key (body
// {"key": k}), which goes into the key cookie the gate reads, HttpOnly too.
ApiResponse Api::cookie_route(std::string_view room, std::string_view ticket,
                              std::string_view body) const {
  ApiResponse err;
  auto o = parse_object(body, &err, true);
  if (!o) return err;
  std::vector<std::string> keys;
  if (const json::value* k = o->if_contains("key")) {
    // The key goes into a cookie: only characters a cookie value holds as they are.
    const auto cookie_safe = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.' ||
             c == '~';
    };
    if (!k->is_string() || k->as_string().empty() || k->as_string().size() > 256 ||
        !std::all_of(k->as_string().begin(), k->as_string().end(), cookie_safe) || o->size() != 1) {
      return error_response(400, "invalid_field",
                            "the body must be {} or {\"key\": \"...\"} (1-256 of A-Z a-z "
                            "0-9 - _ . ~)");
    }
    keys.emplace_back(k->as_string());
  } else if (!o->empty()) {
    return error_response(400, "invalid_field", "the body must be {} or {\"key\": \"...\"}");
  }
  auto v = engine_.peek(room, ticket);
  if (!v.is_ok()) return engine_error(v.status());
  if (!holds_slot(v->state)) {
    return error_response(409, "wrong_state", "the ticket is not admitted");
  }
  auto d = engine_.describe(room, ticket);
  if (!d.is_ok()) return engine_error(d.status());
  if (d->key_hash && !any_key_hashes_to(keys, *d->key_hash)) {
    return error_response(401, "key_required", "the ticket is bound to a key: send it");
  }
  ApiResponse res;
  res.status = 204;
  res.headers.emplace_back("Set-Cookie", admission_cookie(room, v.value()));
  if (!keys.empty() && d->key_hash)
    res.headers.emplace_back("Set-Cookie", key_cookie(room, keys[0], v.value()));
  res.headers.emplace_back("Cache-Control", "no-store");
  return res;
}

std::string Api::admission_cookie(std::string_view room, const TicketView& v) const {
  // Rounded up: the cookie lives as long as its token, not a second less.
  const int64_t max_age =
      std::max<int64_t>(1, (v.valid_until_ms - engine_.clock().now_ms() + 999) / 1000);
  return "anteroom_" + std::string(room) + "=" + token_for(room, v) +
         "; Path=/; Max-Age=" + std::to_string(max_age) + "; SameSite=Lax; HttpOnly" +
         secure_attribute();
}

std::string Api::key_cookie(std::string_view room, std::string_view key,
                            const TicketView& v) const {
  // The session is refreshed at the gate, which renews the admission cookie but not this
  // one: it lives as long as a session may (the room's session TTL) past now, at least.
  auto info = engine_.room_info(room);
  const int64_t session_s = info.is_ok() ? info->config.session_ttl_seconds : 900;
  const int64_t left_s = (v.valid_until_ms - engine_.clock().now_ms() + 999) / 1000;
  return "anteroom_" + std::string(room) + "_key=" + std::string(key) +
         "; Path=/; Max-Age=" + std::to_string(std::max<int64_t>(left_s, 0) + session_s * 4) +
         "; SameSite=Lax; HttpOnly" + secure_attribute();
}

const char* Api::secure_attribute() const {
  return options_.public_url.starts_with("https://") ? "; Secure" : "";
}

namespace {

ApiResponse with(ApiResponse r, Route route) {
  r.route = route;
  return r;
}

ApiResponse not_found() { return error_response(404, "not_found", "no such route"); }

}  // namespace

ApiResponse Api::unauthorized() const {
  ApiResponse res =
      error_response(401, "unauthorized", "this route needs Authorization: Bearer <admin key>");
  res.headers.emplace_back("WWW-Authenticate", "Bearer");
  return res;
}

ApiResponse Api::rooms_route(const ApiRequest& req, const std::vector<std::string_view>& p) const {
  const std::string_view m = req.method;
  if (p.size() == 2) {
    if (m != "GET") return method_not_allowed("GET", Route::kListRooms);
    if (!authorized(req.authorization)) return with(unauthorized(), Route::kListRooms);
    return with(list_rooms(), Route::kListRooms);
  }
  const std::string_view room = p[2];
  if (!valid_room_name(room)) {
    return with(error_response(400, "invalid_room_name",
                               "room names are 1-64 characters of A-Z a-z 0-9 _ -"),
                Route::kNotFound);
  }
  if (p.size() == 3) {
    Route r = m == "PUT" ? Route::kPutRoom : m == "DELETE" ? Route::kDeleteRoom : Route::kGetRoom;
    if (m != "PUT" && m != "GET" && m != "DELETE") return method_not_allowed("GET, PUT, DELETE", r);
    if (!authorized(req.authorization)) return with(unauthorized(), r);
    return with(room_route(req, room), r);
  }
  const std::string_view what = p[3];
  if (p.size() == 4 && what == "tickets") {
    if (m != "POST") return method_not_allowed("POST", Route::kJoin);
    return with(join_route(room, req.body, req.client), Route::kJoin);
  }
  if (p.size() == 4 && (what == "admit" || what == "clear" || what == "verify")) {
    Route r = what == "admit" ? Route::kAdmit : what == "clear" ? Route::kClear : Route::kVerify;
    if (m != "POST") return method_not_allowed("POST", r);
    const bool allowed =
        what == "verify" ? may_verify(req.authorization) : authorized(req.authorization);
    if (!allowed) return with(unauthorized(), r);
    if (what == "admit") return with(admit_route(room, req.body), r);
    if (what == "verify") return with(verify_route(room, req.body), r);
    return with(clear_route(room), r);
  }
  if (p.size() == 4 && what == "challenge") {
    if (m != "GET") return method_not_allowed("GET", Route::kChallenge);
    return with(challenge_route(room), Route::kChallenge);
  }
  if (p.size() == 4 && what == "page") {
    if (m != "GET" && m != "HEAD" && m != "PUT" && m != "DELETE") {
      return method_not_allowed("GET, HEAD, PUT, DELETE", Route::kPage);
    }
    return with(page_route(req, room), Route::kPage);
  }
  if (p.size() == 4 && what == "event") {
    if (m != "GET" && m != "HEAD" && m != "PUT" && m != "DELETE") {
      return method_not_allowed("GET, HEAD, PUT, DELETE", Route::kEvent);
    }
    return with(event_route(req, room), Route::kEvent);
  }
  if (p.size() == 5 && what == "event" && p[4] == "draw") {
    if (m != "GET" && m != "HEAD") return method_not_allowed("GET, HEAD", Route::kDraw);
    return with(draw_route(req, room), Route::kDraw);
  }
  if (p.size() == 4 && what == "ws") {
    if (m != "GET") return method_not_allowed("GET", Route::kWebSocket);
    return with(ws_route(room), Route::kWebSocket);
  }
  if ((p.size() == 5 || p.size() == 6) && what == "tickets") return ticket_route(req, room, p);
  return with(not_found(), Route::kNotFound);
}

ApiResponse Api::ws_route(std::string_view room) const {
  if (auto info = engine_.room_info(room); !info.is_ok()) return engine_error(info.status());
  ApiResponse res;
  res.upgrade = ApiResponse::Upgrade::kWebSocket;
  res.room = std::string(room);
  return res;
}

// /v1/rooms/{room}/tickets/{ticket} and .../events.
ApiResponse Api::ticket_route(const ApiRequest& req, std::string_view room,
                              const std::vector<std::string_view>& p) const {
  const std::string_view m = req.method;
  const std::string_view ticket = p[4];
  if (p.size() == 6 && p[5] == "cookie") {
    if (m != "POST") return method_not_allowed("POST", Route::kCookie);
    return with(cookie_route(room, ticket, req.body), Route::kCookie);
  }
  if (p.size() == 6) {
    if (p[5] != "events") return with(not_found(), Route::kNotFound);
    if (m != "GET") return method_not_allowed("GET", Route::kEvents);
    return with(ticket_read(room, ticket, true), Route::kEvents);
  }
  if (m == "GET" || m == "HEAD") return with(ticket_read(room, ticket, false), Route::kStatus);
  if (m == "DELETE") {
    return with(answer_when([&](const Respond& respond) {
                  engine_.leave_async(room, ticket, [respond](const Result<TicketView>& v) {
                    if (!v.is_ok()) return respond(engine_error(v.status()));
                    ApiResponse res;
                    res.status = 204;
                    respond(std::move(res));
                  });
                }),
                Route::kLeave);
  }
  return method_not_allowed("GET, DELETE", Route::kStatus);
}

ApiResponse Api::ticket_read_now(std::string_view room, std::string_view ticket, bool events,
                                 bool heartbeat) const {
  auto v = heartbeat ? engine_.status(room, ticket) : engine_.peek(room, ticket);
  if (!v.is_ok()) return engine_error(v.status());
  if (!events) {
    ApiResponse res;
    res.body = status_json(room, v.value());
    return res;
  }
  if (!stream_allowed(room, ticket)) {
    return error_response(429, "too_many_streams",
                          "this ticket already has its most open streams; close one");
  }
  ApiResponse res;
  res.upgrade = ApiResponse::Upgrade::kSse;
  res.room = std::string(room);
  res.ticket = std::string(ticket);
  return res;
}

ApiResponse Api::ticket_read(std::string_view room, std::string_view ticket, bool events) const {
  ApiResponse res = ticket_read_now(room, ticket, events, true);
  if (res.status != 404) return res;
  // Perhaps a ticket this copy has not applied yet (a cluster node behind the one that
  // answered the join): look again once it has caught up.
  return answer_when([&](const Respond& respond) {
    const bool waiting = engine_.when_caught_up(
        room, ticket,
        [this, room = std::string(room), ticket = std::string(ticket), events, respond] {
          respond(ticket_read_now(room, ticket, events, true));
        });
    if (!waiting) respond(std::move(res));
  });
}

}  // namespace anteroom
