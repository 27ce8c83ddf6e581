#include "server/app/gate_links.h"

#include <boost/json.hpp>

#include "server/app/jws.h"
#include "server/app/wait_page.h"

namespace anteroom {
namespace json = boost::json;

namespace {

std::string claim(const json::object& o, const char* k) {
  const json::string* s = string_claim(o, k);
  return s == nullptr ? std::string() : std::string(*s);
}

}  // namespace

std::string make_enter_link(std::string_view key, const EnterLink& link) {
  json::object c;
  c["typ"] = "enter";
  c["room"] = link.room;
  if (!link.cookie.empty()) c["c"] = link.cookie;
  if (!link.pass.empty()) c["pass"] = link.pass;
  c["ret"] = link.ret;
  c["exp"] = link.expires_at;
  c["jti"] = link.id;
  return sign_hs256(c, key);
}

std::optional<EnterLink> read_enter_link(std::string_view key, std::string_view token,
                                         int64_t now_s) {
  auto o = verify_hs256(token, key, nullptr);
  if (!o || claim(*o, "typ") != "enter") return std::nullopt;
  EnterLink l;
  l.room = claim(*o, "room");
  l.cookie = claim(*o, "c");
  l.pass = claim(*o, "pass");
  l.ret = safe_return_url(claim(*o, "ret"));
  l.id = claim(*o, "jti");
  auto exp = number_claim(*o, "exp");
  if (!exp || *exp <= now_s || l.room.empty() || l.id.empty() ||
      l.cookie.empty() == l.pass.empty()) {
    return std::nullopt;
  }
  l.expires_at = *exp;
  return l;
}

std::string make_pass(std::string_view key, const PassClaims& pass) {
  json::object c;
  c["typ"] = "pass";
  c["room"] = pass.room;
  c["pid"] = pass.id;
  c["exp"] = pass.expires_at;
  return sign_hs256(c, key);
}

std::optional<PassClaims> read_pass(std::string_view key, std::string_view token, int64_t now_s) {
  auto o = verify_hs256(token, key, nullptr);
  if (!o || claim(*o, "typ") != "pass") return std::nullopt;
  PassClaims p{claim(*o, "room"), claim(*o, "pid"), 0};
  auto exp = number_claim(*o, "exp");
  if (!exp || *exp <= now_s || p.room.empty() || p.id.empty()) return std::nullopt;
  p.expires_at = *exp;
  return p;
}

}  // namespace anteroom
