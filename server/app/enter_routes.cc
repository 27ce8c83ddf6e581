// Api: the routes around the forward-auth gate that a visitor or an operator calls: the
// one-time /v1/enter link that sets a cookie and sends the visitor back, passes (made,
// listed, revoked by operators; taken by their holders through /v1/enter), and /wait
// without a room (the room whose match rules fit the address to go back to).
#include <openssl/rand.h>

#include <boost/json.hpp>

#include "engine/hex.h"
#include "server/app/api.h"
#include "server/app/gate_ask.h"
#include "server/app/gate_links.h"
#include "server/app/room_json.h"
#include "server/app/token.h"
#include "server/app/wait_page.h"

namespace anteroom {
namespace json = boost::json;

namespace {

// A path for a Location header: every byte outside printable ASCII percent-encoded.
std::string location_of(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (u > 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

ApiResponse back_to(const std::string& ret, const std::string& set_cookie) {
  ApiResponse res = gate_redirect(location_of(ret));
  if (!set_cookie.empty()) res.headers.emplace_back("Set-Cookie", set_cookie);
  res.headers.emplace_back("Referrer-Policy", "no-referrer");  // the link is a credential
  return res;
}

// A new pass's fields from a POST body: its label, when it ends, how many browsers it may
// let in (0: any). nullopt with *err the 400 answer.
struct NewPass {
  std::string label;
  int64_t expires_at_ms = 0;
  uint64_t uses = 0;
};
std::optional<NewPass> read_new_pass(std::string_view body, int64_t now_ms, ApiResponse* err) {
  auto o = parse_object(body, err, false);
  if (!o) return std::nullopt;
  for (const auto& kv : *o) {
    if (kv.key() != "label" && kv.key() != "expires_at" && kv.key() != "uses") {
      *err = error_response(400, "invalid_field", "unknown field '" + std::string(kv.key()) + "'");
      return std::nullopt;
    }
  }
  const json::value* label = o->if_contains("label");
  const json::value* at = o->if_contains("expires_at");
  std::optional<int64_t> expires =
      at && at->is_string() ? parse_rfc3339(at->as_string()) : std::nullopt;
  NewPass p;
  if (label == nullptr || !label->is_string() || label->as_string().empty() ||
      label->as_string().size() > 128 || !valid_utf8(label->as_string())) {
    *err = error_response(400, "invalid_field", "label must be a string of 1-128 bytes");
    return std::nullopt;
  }
  if (!expires || *expires <= now_ms || *expires > now_ms + int64_t{366} * 86'400'000) {
    *err = error_response(400, "invalid_field",
                          "expires_at must be an RFC 3339 time within the next year");
    return std::nullopt;
  }
  if (!read_count(*o, "uses", 1'000'000, &p.uses, err)) return std::nullopt;
  p.label = std::string(label->as_string());
  p.expires_at_ms = *expires;
  return p;
}

}  // namespace

ApiResponse Api::enter_route(const ApiRequest& req, std::string_view query) const {
  const int64_t now_s = now_ms() / 1000;
  // A browser is never shown raw JSON: a link it cannot use (an old one, back in history)
  // sends it to the site's front page, where the gate decides afresh.
  const bool browser = req.accept.find("text/html") != std::string_view::npos;
  if (auto t = query_param(query, "t")) {
    auto link = read_enter_link(link_key_, *t, now_s);
    if (!link || !valid_room_name(link->room)) {
      if (browser) return back_to("/", {});
      return error_response(400, "link_invalid",
                            "this link is not one of the gate's, or it expired: go back to the "
                            "page you came from");
    }
    // One use: whoever sees the link after the visitor (a log, a shared screen) gets sent
    // on without the cookie.
    // The key before the link moves into the callback (an argument's order is unspecified).
    const std::string spent = "enter:" + link->id;
    return answer_when([&](const Respond& respond) {
      engine_.spend(spent, 1, 120'000, [this, link = std::move(*link), now_s, respond](bool first) {
        if (!first) return respond(back_to(link.ret, {}));
        auto said = claims_unchecked(split_admission(link.cookie).token);
        const int64_t max_age = said ? said->expires_at - now_s : 0;
        if (max_age <= 0) return respond(back_to(link.ret, {}));
        respond(back_to(link.ret, admission_set_cookie(link.room, link.cookie, max_age)));
      });
    });
  }
  auto token = query_param(query, "pass");
  auto pass = token ? read_pass(link_key_, *token, now_s) : std::nullopt;
  const std::string ret = safe_return_url(query_param(query, "return").value_or("/"));
  const GateIndexRoom* room = pass ? gate_index()->room(pass->room) : nullptr;
  const RoomConfig::Pass* kept = nullptr;
  for (size_t i = 0; room != nullptr && i < room->passes.size(); ++i) {
    if (room->passes[i].id == pass->id) kept = &room->passes[i];
  }
  if (kept == nullptr || kept->revoked || kept->expires_at_ms <= now_ms()) {
    // Never a ticket: the holder of a bad pass is where anyone else is, in front of the line.
    if (pass && valid_room_name(pass->room)) {
      return back_to("/wait/" + pass->room + "?return=" + percent_encode(ret), {});
    }
    if (browser) return back_to("/", {});
    return error_response(403, "pass_invalid", "this pass is not valid (expired or revoked?)");
  }
  // Not the link's token: a cookie of its own kind, so having the link is not having the
  // cookie, and each browser it lets in spends a use.
  const std::string cookie = pass_cookie_name(pass->room) + "=" +
                             make_pass(link_key_, *pass, PassForm::kCookie) +
                             "; Path=/; Max-Age=" + std::to_string(pass->expires_at - now_s) +
                             "; SameSite=Lax; HttpOnly" + secure_attribute();
  const uint32_t uses = kept->uses;
  if (uses == 0) return back_to(ret, cookie);
  const int64_t ttl_ms = (pass->expires_at - now_s + 60) * 1000;
  return answer_when([&](const Respond& respond) {
    engine_.spend("pass:" + pass->id, uses, ttl_ms,
                  [room = pass->room, ret, cookie, respond](bool within) {
                    if (within) return respond(back_to(ret, cookie));
                    respond(back_to("/wait/" + room + "?return=" + percent_encode(ret), {}));
                  });
  });
}

ApiResponse Api::passes_route(const ApiRequest& req, std::string_view room,
                              std::string_view id) const {
  auto info = engine_.room_info(room);
  if (!info.is_ok()) return engine_error(info.status());
  const std::vector<RoomConfig::Pass>& passes = info->config.passes;
  if (req.method == "GET") {
    json::array list;
    for (const RoomConfig::Pass& p : passes) {
      list.emplace_back(json::object{{"id", p.id},
                                     {"label", p.label},
                                     {"expires_at", rfc3339(p.expires_at_ms)},
                                     {"uses", p.uses},
                                     {"revoked", p.revoked}});
    }
    ApiResponse res;
    res.body = json::serialize(json::object{{"passes", std::move(list)}});
    return res;
  }
  RoomConfig put;
  put.parts = RoomConfig::kPasses;
  put.passes_prune_before_ms = now_ms() - int64_t{86'400'000};  // gone a day after they end
  unsigned ok_status = 204;
  std::string answer;
  if (req.method == "DELETE") {
    auto it = std::find_if(passes.begin(), passes.end(),
                           [&](const RoomConfig::Pass& p) { return p.id == id; });
    if (it == passes.end()) return error_response(404, "pass_not_found", "no such pass");
    put.passes.push_back(*it);
    put.passes.back().revoked = true;
  } else {
    ApiResponse err;
    auto np = read_new_pass(req.body, now_ms(), &err);
    if (!np) return err;
    if (passes.size() >= RoomConfig::kMaxPasses) {
      return error_response(409, "too_many_passes", "a room holds at most 1000 passes");
    }
    unsigned char b[16];
    if (RAND_bytes(b, sizeof b) != 1) std::abort();
    RoomConfig::Pass p{to_hex(b, sizeof b), np->label, np->expires_at_ms,
                       static_cast<uint32_t>(np->uses), false};
    const std::string token =
        make_pass(link_key_, PassClaims{std::string(room), p.id, (np->expires_at_ms + 999) / 1000});
    const std::string path = "/v1/enter?pass=" + token;
    const std::string base =
        options_.public_url.substr(0, options_.public_url.find_last_not_of('/') + 1);
    answer = json::serialize(json::object{{"id", p.id},
                                          {"pass", token},
                                          {"url", base + path},
                                          {"path", path},
                                          {"expires_at", rfc3339(np->expires_at_ms)}});
    ok_status = 201;
    put.passes.push_back(std::move(p));
  }
  return answer_when([&](const Respond& respond) {
    engine_.put_room_async(room, put, [answer, ok_status, respond](const Status& st) {
      if (!st.is_ok()) return respond(engine_error(st));
      ApiResponse res;
      res.status = ok_status;
      res.body = answer;
      respond(std::move(res));
    });
  });
}

ApiResponse Api::wait_any_route(const ApiRequest& req, std::string_view query) const {
  // The address to go back to: ?return= (a path), or ingress-nginx's ?rd= (a whole URL), or
  // nginx's X-Anteroom-Return (the page shown in place, at the address itself).
  std::string ret = query_param(query, "return").value_or(std::string(req.return_header));
  std::string host(!req.forwarded_host.empty() ? req.forwarded_host : req.host);
  if (ret.empty()) {
    // ingress-nginx escapes its rd; an unescaped one (plain nginx has no way to escape)
    // that comes first is taken whole, its URL's own query in it.
    std::string rd = query_param(query, "rd").value_or("");
    if (query.starts_with("rd=") && query.find('%') == std::string_view::npos) {
      rd = std::string(query.substr(3));
    }
    const size_t scheme = rd.find("://");
    if (scheme != std::string::npos) {
      const size_t slash = rd.find('/', scheme + 3);
      host = rd.substr(scheme + 3, slash - scheme - 3);
      ret = slash == std::string::npos ? "/" : rd.substr(slash);
    }
  }
  ret = safe_return_url(ret);
  host = gate_host(host);
  auto path = plain_path(ret);
  const std::string_view raw = std::string_view(ret).substr(0, ret.find('?'));
  const GateIndexRoom* room = path ? gate_index()->find(host, *path, raw) : nullptr;
  if (room == nullptr) {
    return error_response(404, "no_room", "no room's match rules fit this address");
  }
  // The page in place of an address a script asked for, or of a request that is not a page
  // load (nginx's error_page keeps the visitor's method): what the gate gives any client
  // that is not a browser.
  if (req.accept.find("text/html") == std::string_view::npos ||
      (req.method != "GET" && req.method != "HEAD")) {
    return in_line_answer(room->name);
  }
  std::string page_query = "return=" + percent_encode(ret);
  // An invite in the page's own query, or in the address's (nginx shows the page in place
  // of /shop/?invite=..., and its rewrite to /wait drops the query).
  const size_t q = ret.find('?');
  auto invite = query_param(query, "invite");
  if (!invite && q != std::string::npos)
    invite = query_param(std::string_view(ret).substr(q + 1), "invite");
  if (invite) page_query += "&invite=" + percent_encode(*invite);
  return wait_route(req, room->name, page_query);
}

}  // namespace anteroom
