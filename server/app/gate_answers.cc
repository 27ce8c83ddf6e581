// Api: the forward-auth gate's answers (forward_auth.cc asks): an admission used, the gate's
// own admission while the room has a free slot and nobody waits, the cookie given on the
// 200 or through a one-time /v1/enter link, passes, and the refusal each proxy can show.
#include <boost/json.hpp>

#include "server/app/api.h"
#include "server/app/fast_pass.h"
#include "server/app/gate_ask.h"
#include "server/app/gate_links.h"
#include "server/app/keys.h"
#include "server/app/wait_page.h"

namespace anteroom {
namespace json = boost::json;

std::shared_ptr<const GateIndex> Api::gate_index() const {
  const uint64_t version = engine_.config_version();
  auto index = gate_index_.load();
  if (index != nullptr && gate_version_.load(std::memory_order_acquire) == version) return index;
  std::lock_guard lock(gate_mu_);
  index = gate_index_.load();
  if (index != nullptr && gate_version_.load(std::memory_order_acquire) == version) return index;
  // Read the version before the rooms: a change meanwhile makes the next request build again.
  index = std::make_shared<const GateIndex>(engine_.rooms());
  gate_index_.store(index);
  gate_version_.store(version, std::memory_order_release);
  return index;
}

bool Api::pass_admits(const GateIndexRoom& room, std::string_view cookies) const {
  const std::string name = pass_cookie_name(room.name) + "=";
  const int64_t now = now_ms();
  for (size_t i = cookies.find(name); i != std::string_view::npos; i = cookies.find(name, i + 1)) {
    if (i != 0 && cookies[i - 1] != ' ' && cookies[i - 1] != ';') continue;
    const size_t from = i + name.size();
    const std::string_view value =
        cookies.substr(from, std::min(cookies.find(';', from), cookies.size()) - from);
    auto pass = read_pass(link_key_, value, now / 1000, PassForm::kCookie);
    if (!pass || pass->room != room.name) continue;
    for (const RoomConfig::Pass& p : room.passes) {
      if (p.id == pass->id && !p.revoked && p.expires_at_ms > now) return true;
    }
  }
  return false;
}

bool Api::gate_set_cookie(const GateAsk& a, const std::string& value, int64_t max_age_s,
                          std::string_view visitor, const Respond& respond) const {
  const std::string& room = a.room->name;
  if (a.pass_cookies) {
    ApiResponse res = gate_allowed(visitor);
    // One Set-Cookie: nginx 1.22 passes the first only, later ones join them into one line.
    res.headers.emplace_back("Set-Cookie", admission_set_cookie(room, value, max_age_s));
    add_fast_pass(a, max_age_s, &res);
    respond(std::move(res));
    return true;
  }
  if (!a.browser) return false;  // only a browser's GET can be sent round and back
  EnterLink link{
      room, value, {}, safe_return_url(a.o.target), now_ms() / 1000 + 60, random_cookie_key()};
  respond(gate_redirect(a.base + "/v1/enter?t=" + make_enter_link(link_key_, link)));
  return true;
}

void Api::gate_allow(const GateAsk& a, const Admitted& admitted, const Respond& respond) const {
  metrics_.gate().count(GateOutcome::kAdmitted);
  const std::string& room = a.room->name;
  const TicketView& v = admitted.ticket.ticket;
  // A fresh token, to the session's new idle deadline: given where the proxy passes it on
  // (then every time), else only once the cookie's token has less than half its life left.
  const int64_t now_s = now_ms() / 1000;
  const int64_t valid_s = (v.valid_until_ms - engine_.clock().now_ms()) / 1000;
  const bool renew = admitted.cookie_expires_at - now_s < valid_s / 2;
  if (a.pass_cookies || (renew && a.browser)) {
    const std::string value = admission_value(room, v, admitted.key);
    if (gate_set_cookie(a, value, std::max<int64_t>(1, valid_s), id_view(v.id), respond)) return;
  }
  ApiResponse res = gate_allowed(id_view(v.id));
  add_fast_pass(a, valid_s, &res);
  respond(std::move(res));
}

void Api::add_fast_pass(const GateAsk& a, int64_t valid_s, ApiResponse* res) const {
  if (a.fast_host.empty()) return;
  // Never past the admission's own end.
  const int64_t seconds = std::min<int64_t>(options_.fast_pass_seconds, valid_s);
  if (seconds < 1) return;
  const int64_t expires_at = now_ms() / 1000 + seconds;
  // A header of its own: nginx sets it as a second Set-Cookie (auth_request_set).
  res->headers.emplace_back(
      "X-Anteroom-Fast-Pass",
      std::string(kFastPassCookie) + "=" +
          fast_pass_value(options_.fast_pass_secret, a.fast_host, expires_at) +
          "; Path=/; Max-Age=" + std::to_string(seconds) + "; SameSite=Lax; HttpOnly" +
          secure_attribute());
}

void Api::gate_not_admitted(const std::shared_ptr<GateAsk>& a, const Respond& respond) const {
  const GateSettings& g = a->room->settings;
  const std::string& room = a->room->name;
  auto rules = engine_.join_rules(room);
  // The gate admits by itself only while a join would be admitted at once, and only where
  // it can hand the visitor the cookie (on the 200, or by a browser's round trip).
  if (!g.gate_admits || g.invite_only || !rules.is_ok() || !rules->free_slot ||
      rules->pow_difficulty != 0 || !(a->pass_cookies || a->browser)) {
    return gate_deny(*a, respond);
  }
  // Counted against the address like any join (a refused one is refused here too), and
  // against the gate's own cap: a client that never keeps the cookie comes back for another
  // admission on every request.
  uint32_t retry = 0;
  if (g.gate_ip_admits_per_minute != 0 &&
      !join_limiter_->allow(room + "\x01gate", a->client, g.gate_ip_admits_per_minute, now_ms(),
                            &retry)) {
    return gate_deny(*a, respond);
  }
  if (refuse_join(room, a->client, nullptr)) return gate_deny(*a, respond);
  auto key = std::make_shared<std::string>(random_cookie_key());
  JoinRequest req;
  req.key_hash = hash_key(*key);
  req.probation_s = g.gate_probation_seconds;
  const uint32_t session_s = rules->session_ttl_seconds;
  join(room, req, [this, a, key, session_s, respond](const Result<JoinResult>& r) {
    if (!r.is_ok()) return gate_deny(*a, respond);
    const TicketView& v = r->ticket;
    if (!holds_slot(v.state)) {  // another join took the slot first: this one goes
      engine_.leave_async(a->room->name, id_view(v.id), [](const Result<TicketView>&) {});
      return gate_deny(*a, respond);
    }
    metrics_.gate().count(GateOutcome::kDirect);
    // The slot is held gate_probation_seconds unless the visitor comes back with the cookie
    // (their next request makes it ACTIVE); the token lasts as a session would, since the
    // gate checks the live ticket on every use.
    const int64_t until = engine_.clock().now_ms() + int64_t{session_s} * 1000;
    const std::string value = admission_value(a->room->name, v, *key, until);
    if (!gate_set_cookie(*a, value, session_s, id_view(v.id), respond)) gate_deny(*a, respond);
  });
}

void Api::gate_deny(const GateAsk& a, const Respond& respond) const {
  metrics_.gate().count(GateOutcome::kDenied);
  const std::string& room = a.room->name;
  if (a.o.nginx_way) {  // nginx and ingress-nginx turn any other status into 500
    ApiResponse res;
    res.status = 401;  // no body: nginx keeps the gate's connection only for those
    res.content_type.clear();
    return respond(std::move(res));
  }
  if (a.browser) {
    return respond(gate_redirect(a.base + "/wait/" + room +
                                 "?return=" + percent_encode(safe_return_url(a.o.target))));
  }
  respond(in_line_answer(room));
}

ApiResponse in_line_answer(std::string_view room) {
  json::object o;
  o["error"] = json::object{{"code", "in_line"},
                            {"message", "this address is behind a waiting room: join its line"}};
  o["room"] = room;
  o["status"] = nullptr;
  o["join"] = "/v1/rooms/" + std::string(room) + "/tickets";
  ApiResponse res;
  res.status = 429;
  res.body = json::serialize(o);
  res.headers.emplace_back("Retry-After", "5");
  return res;
}

}  // namespace anteroom
