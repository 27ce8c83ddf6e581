// The signed links of the forward-auth gate (docs/api.md): the one-time /v1/enter link that
// sets the admission cookie where the proxy cannot pass one on an allow (gate_cookies
// "redirect"), and passes, links that let their holder through a room's gate. Both are
// HS256 JWTs under a key every node derives from the token secret, so any node takes any
// node's links; what makes them one-time, or good for n uses, is RoomService::spend.
//
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace anteroom {

struct EnterLink {
  std::string room;
  std::string cookie;      // the admission cookie's value (TOKEN~KEY), or empty; sealed in
                           // the link (AES-256-GCM), never readable from it
  std::string pass;        // a pass (make_pass), or empty
  std::string ret;         // where the visitor goes back to: a path on the site, with its query
  int64_t expires_at = 0;  // Unix s
  std::string id;          // random: what RoomService::spend counts
};
std::string make_enter_link(std::string_view key, const EnterLink& link);
// nullopt unless signed under `key`, unexpired at `now_s`, and well formed.
std::optional<EnterLink> read_enter_link(std::string_view key, std::string_view token,
                                         int64_t now_s);

struct PassClaims {
  std::string room;
  std::string id;  // RoomConfig::Pass::id
  int64_t expires_at = 0;
};
// A pass's link (what an operator hands out) and the cookie /v1/enter sets for one use of it
// are signed as different kinds: the link is not a cookie, so a use is counted for every
// browser it lets through (a pass's "uses").
enum class PassForm { kLink, kCookie };
std::string make_pass(std::string_view key, const PassClaims& pass,
                      PassForm form = PassForm::kLink);
std::optional<PassClaims> read_pass(std::string_view key, std::string_view token, int64_t now_s,
                                    PassForm form = PassForm::kLink);

}  // namespace anteroom
