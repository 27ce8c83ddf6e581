// Api: the gate (GET /v1/gate/{room}), the admission cookie and the verify path they share:
// a token checked, then its key binding, then the ticket activated.
//
// The admission cookie anteroom_{room} (__Host-anteroom_{room} behind https) carries what the
// visitor needs in one cookie: the admission token and, for a bound ticket, the key, as TOKEN~KEY
// (a JWT holds no '~'). One cookie, because proxies pass at most one Set-Cookie of an auth answer
// (nginx 1.22 keeps the first, later ones join them into one broken line), and every gate refresh
// renews both: a visitor using the site is never locked out by a key that expired before the token.
// The token alone (as status and verify hand it out) still opens nothing for a bound ticket. The
// separate anteroom_{room}_key cookie of earlier versions is still read.
#include <boost/json.hpp>
#include <cstdint>

#include "server/app/admission_memo.h"
#include "server/app/api.h"

namespace anteroom {
namespace json = boost::json;

namespace {

// The values of every `name` cookie (at most `most`) in a Cookie header.
std::vector<std::string> cookie_values(std::string_view cookies, std::string_view name,
                                       size_t most) {
  std::vector<std::string> out;
  for (size_t i = 0; i < cookies.size() && out.size() < most;) {
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

// The key of `keys` that hashes to `want`, or empty.
std::string key_hashing_to(const std::vector<std::string>& keys, const KeyHash& want) {
  for (const std::string& k : keys) {
    if (same_hash(hash_key(k), want)) return k;
  }
  return {};
}

// A key goes into a cookie as it is: only characters a cookie value holds.
bool cookie_safe_key(std::string_view k) {
  return !k.empty() && k.size() <= 256 && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.' ||
           c == '~';
  });
}

}  // namespace

AdmissionParts split_admission(std::string_view value) {
  const size_t tilde = value.find('~');
  if (tilde == std::string_view::npos) return {std::string(value), {}};
  return {std::string(value.substr(0, tilde)), std::string(value.substr(tilde + 1))};
}

void Api::use_token(std::string_view room, std::string_view token,
                    const std::vector<std::string>& keys,
                    RoomService::Then<TicketDetail> then) const {
  TokenError why = TokenError::kMalformed;
  auto claims = tokens_.verify(token, room, now_ms() / 1000, &why);
  if (!claims) return then(Status(Code::kInvalidArgument, token_error_text(why)));
  use_claims(room, *claims, keys, std::move(then));
}

void Api::use_claims(std::string_view room, const TokenClaims& claims,
                     const std::vector<std::string>& keys, RoomService::Then<TicketDetail> then,
                     bool key_known) const {
  // Bound admissions: the token's cnf, and the ticket's own key (a token from before the
  // binding cannot shed it), checked before the ticket is touched, so a copied token used
  // without its key changes nothing.
  std::optional<KeyHash> bound;
  if (!claims.key_hash.empty()) bound = parse_key_hash(claims.key_hash);
  if (!bound) {
    if (auto d = engine_.describe(room, claims.ticket); d.is_ok()) bound = d->key_hash;
  }
  if (bound && !(key_known && !keys.empty()) && !any_key_hashes_to(keys, *bound)) {
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
  return answer_when([&](const Respond& respond) {
    check_admission(room, cookies, [this, room = std::string(room), respond](auto admitted) {
      if (!admitted) {
        return respond(
            error_response(401, "no_admission", "no valid admission for room '" + room + "'"));
      }
      // The session goes on: a fresh token, valid to the new idle deadline, and the key it
      // is bound to, replace the cookie, so the visitor is never locked out while using
      // the service.
      ApiResponse res;
      res.status = 204;
      res.headers.emplace_back("Set-Cookie",
                               admission_cookie(room, admitted->ticket.ticket, admitted->key));
      respond(std::move(res));
    });
  });
}

void Api::check_admission(std::string_view room, std::string_view cookies,
                          std::function<void(std::optional<Admitted>)> done) const {
  const std::string name = admission_cookie_name(room);
  const std::vector<std::string> old_keys =
      cookie_values(cookies, "anteroom_" + std::string(room) + "_key", 8);
  const int64_t now_s = now_ms() / 1000;
  // The cookies that could admit, judged by what they state (no signature checked): not
  // expired, for this room, carrying the key they are bound to, for a ticket that holds a
  // slot. Then those whose signature costs nothing to check (HS256; ES256 tokens this server
  // signed or verified, in its cache), and at most one that needs an ECDSA verification:
  // whatever the cookies, a request costs one check at most. Junk cookies a sibling site
  // planted cost none and are passed over (every cookie of the name is read: the header
  // limit bounds them), so they cannot push the visitor's own out of reach; a planted
  // forgery that states a live ticket and carries its key can take the one check (it is
  // remembered, so each costs the visitor one refused request: docs/security.md).
  std::vector<GateCandidate> cheap;
  std::optional<GateCandidate> costly;
  for (std::string& value : cookie_values(cookies, name, SIZE_MAX)) {
    if (cheap.size() >= 8) break;
    // Read through before: only its exp may have passed (the ticket is checked on use).
    if (const MemoAdmission* m = memo_find(room, value); m != nullptr) {
      if (m->claims.expires_at <= now_s) continue;
      cheap.push_back(GateCandidate{{}, {{}, m->key}, m->claims, false, true});
      continue;
    }
    AdmissionParts parts = split_admission(value);
    GateCandidate c{std::move(value), std::move(parts), {}, false, false};
    auto said = claims_unchecked(c.parts.token);
    if (!said || said->expires_at <= now_s || said->room != room) continue;
    std::vector<std::string> keys = old_keys;
    if (!c.parts.key.empty()) keys.push_back(c.parts.key);
    if (!said->key_hash.empty()) {
      auto want = parse_key_hash(said->key_hash);
      if (!want || !any_key_hashes_to(keys, *want)) continue;
    }
    auto live = engine_.peek(room, said->ticket);
    if (!live.is_ok() || !holds_slot(live->state)) continue;
    bool needs_check = false;
    if (auto verified = tokens_.verify_if_cheap(c.parts.token, room, now_s, &needs_check)) {
      c.claims = std::move(*verified);
      cheap.push_back(std::move(c));
    } else if (needs_check && !costly) {
      c.needs_check = true;
      costly = std::move(c);
    }
  }
  if (costly) cheap.push_back(std::move(*costly));
  gate_try(std::string(room), std::move(cheap), old_keys, 0, std::move(done));
}

// Tries the candidates in turn: the first whose admission still holds wins. Only the last may
// need a signature check; if it fails, so does the request.
void Api::gate_try(const std::string& room, std::vector<GateCandidate> candidates,
                   const std::vector<std::string>& old_keys, size_t index,
                   std::function<void(std::optional<Admitted>)> done) const {
  if (index == candidates.size()) return done(std::nullopt);
  GateCandidate& c = candidates[index];
  if (c.needs_check) {
    auto claims = tokens_.verify(c.parts.token, room, now_ms() / 1000);
    if (!claims) return done(std::nullopt);
    c.claims = std::move(*claims);
  }
  std::vector<std::string> keys = old_keys;
  if (!c.parts.key.empty()) keys.insert(keys.begin(), c.parts.key);
  const TokenClaims claims = c.claims;
  // A remembered key is known to hash to the cnf; a remembered keyless cookie is checked as
  // before (its ticket might have been bound since).
  const bool key_known = c.remembered && !c.parts.key.empty();
  use_claims(
      room, claims, keys,
      [this, room, candidates = std::move(candidates), old_keys, keys, index,
       done = std::move(done)](const Result<TicketDetail>& used) mutable {
        if (!used.is_ok()) {
          return gate_try(room, std::move(candidates), old_keys, index + 1, std::move(done));
        }
        GateCandidate& it = candidates[index];
        std::string key;
        if (used->key_hash)
          key = it.remembered ? it.parts.key : key_hashing_to(keys, *used->key_hash);
        // Remembered when the cookie alone made the case: its own key is the ticket's and the
        // token's cnf (or neither has one); a legacy key cookie's help is not.
        const auto cnf =
            it.claims.key_hash.empty() ? std::nullopt : parse_key_hash(it.claims.key_hash);
        const bool own = used->key_hash
                             ? cnf == used->key_hash && key == it.parts.key && !key.empty()
                             : it.claims.key_hash.empty() && it.parts.key.empty();
        if (!it.remembered && own)
          memo_store(room, it.value, MemoAdmission{it.claims, it.parts.key});
        done(Admitted{used.value(), std::move(key), it.claims.expires_at});
      },
      key_known);
}

// The admission cookie, set by the server (HttpOnly): the waiting page asks for it once
// admitted, so a stale cookie of an earlier admission is always replaced. Holding the
// ticket id is the credential, as for status; a bound ticket also needs its key (body
// {"key": k}), which goes into the cookie with the token.
ApiResponse Api::cookie_route(std::string_view room, std::string_view ticket,
                              std::string_view body) const {
  ApiResponse err;
  auto o = parse_object(body, &err, true);
  if (!o) return err;
  std::vector<std::string> keys;
  if (const json::value* k = o->if_contains("key")) {
    if (!k->is_string() || !cookie_safe_key(k->as_string()) || o->size() != 1) {
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
  res.headers.emplace_back(
      "Set-Cookie", admission_cookie(room, v.value(), d->key_hash ? keys[0] : std::string()));
  res.headers.emplace_back("Cache-Control", "no-store");
  return res;
}

std::string Api::admission_cookie(std::string_view room, const TicketView& v,
                                  std::string_view key) const {
  // Rounded up: the cookie lives as long as its token, not a second less.
  const int64_t max_age =
      std::max<int64_t>(1, (v.valid_until_ms - engine_.clock().now_ms() + 999) / 1000);
  return admission_set_cookie(room, admission_value(room, v, key), max_age);
}

std::string Api::admission_value(std::string_view room, const TicketView& v, std::string_view key,
                                 int64_t until_ms) const {
  TicketView t = v;
  if (until_ms != 0) t.valid_until_ms = until_ms;
  std::string value = token_for(room, t);
  if (!key.empty()) {
    value += '~';
    value += key;
  }
  return value;
}

std::string Api::admission_set_cookie(std::string_view room, std::string_view value,
                                      int64_t max_age_s) const {
  return admission_cookie_name(room) + "=" + std::string(value) +
         "; Path=/; Max-Age=" + std::to_string(max_age_s) + "; SameSite=Lax; HttpOnly" +
         secure_attribute();
}

// Behind an https --public-url the cookie is __Host-anteroom_{room}: a browser keeps a
// __Host- cookie only if it is Secure, has Path=/ and names no Domain, so a sibling subdomain
// cannot plant one (cookie tossing), and the gate reads that name alone. Over plain HTTP no
// prefix is possible (it needs Secure), and the name is anteroom_{room}.
std::string Api::admission_cookie_name(std::string_view room) const {
  return (options_.public_url.starts_with("https://") ? "__Host-anteroom_" : "anteroom_") +
         std::string(room);
}

std::string Api::pass_cookie_name(std::string_view room) const {
  return (options_.public_url.starts_with("https://") ? "__Host-anteroom_pass_"
                                                      : "anteroom_pass_") +
         std::string(room);
}

const char* Api::secure_attribute() const {
  return options_.public_url.starts_with("https://") ? "; Secure" : "";
}

}  // namespace anteroom
