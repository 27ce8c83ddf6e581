// Api: the forward-auth gate (GET /v1/gate; /v1/authz/{path} for Envoy), asked by a proxy
// about one request of a visitor: let it through (200), or not (401 when asked the nginx
// way, else 302 to the waiting page for a browser and 429 JSON for any other client). The
// room is the one whose match rules fit the request; none fits: not protected, allowed.
// docs/integrations.md has each proxy's side; ../proxies contracts in docs/api.md.
#include <openssl/rand.h>

#include <boost/json.hpp>
#include <cctype>

#include "server/app/api.h"
#include "server/app/fast_pass.h"
#include "server/app/gate_ask.h"
#include "server/app/gate_index.h"
#include "server/app/gate_links.h"
#include "server/app/jws.h"
#include "server/app/keys.h"
#include "server/app/wait_page.h"

namespace anteroom {
namespace json = boost::json;

namespace {

std::string_view header(const ApiRequest& r, std::string_view name) {
  return r.headers != nullptr ? r.headers->get(name) : std::string_view{};
}

// Printable ASCII without a backslash or a '#' (no request target holds one); a path may
// hold '/' and '@' ("/@alice"), a host or a method neither (no "user@host").
bool plain_text(std::string_view s, bool path) {
  return std::all_of(s.begin(), s.end(), [&](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7f && c != '\\' && c != '#' && (path || (c != '/' && c != '@'));
  });
}

// "https://shop.example:8443/a?b" into its proto, host and target.
bool split_url(std::string_view url, GateOriginal* o) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  o->proto = std::string(url.substr(0, scheme));
  url.remove_prefix(scheme + 3);
  const size_t slash = url.find('/');
  o->host = std::string(url.substr(0, slash));
  o->target = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  return true;
}

std::string first(std::string_view a, std::string_view b) {
  return std::string(!a.empty() ? a : b);
}

// Read only from a --trusted-proxy peer (forward_auth checks it first). A proxy passes the
// visitor's own headers on to the gate, so a question that names the request in two ways
// (one of them the visitor's) is refused rather than guessed at; and the host is the one
// the proxy says, never the gate's own Host (the proxy's upstream name).
std::optional<GateOriginal> read_original(const ApiRequest& req,
                                          std::optional<std::string_view> authz_path,
                                          std::string* why) {
  GateOriginal o;
  const std::string_view url = header(req, "X-Original-URL");
  const std::string_view uri = header(req, "X-Original-URI");
  const std::string_view fwd = header(req, "X-Forwarded-Uri");
  if (int{!url.empty()} + int{!uri.empty()} + int{!fwd.empty()} + int{authz_path.has_value()} > 1) {
    *why =
        "the question names the request twice (X-Original-URL, X-Original-URI, "
        "X-Forwarded-Uri, /v1/authz: one only); strip the visitor's own in the proxy";
    return std::nullopt;
  }
  if (authz_path) {  // Envoy: the visitor's own method and path, under /v1/authz
    o.method = std::string(req.method);
    o.host = std::string(req.host);
    o.target = "/" + std::string(*authz_path);
    o.proto = std::string(header(req, "X-Forwarded-Proto"));
  } else if (!url.empty()) {
    if (!split_url(url, &o)) return std::nullopt;
    o.nginx_way = true;
  } else if (!uri.empty() || !fwd.empty()) {
    o.target = std::string(!uri.empty() ? uri : fwd);
    o.host = std::string(header(req, "X-Forwarded-Host"));
    o.proto = !uri.empty() ? first(header(req, "X-Forwarded-Proto"), header(req, "X-Scheme"))
                           : std::string(header(req, "X-Forwarded-Proto"));
    o.nginx_way = !uri.empty();
  } else {
    return std::nullopt;
  }
  if (!authz_path) {
    o.method = first(header(req, o.nginx_way ? "X-Original-Method" : "X-Forwarded-Method"), "GET");
  }
  o.host = gate_host(o.host);
  if (o.proto != "https") o.proto = o.proto.empty() || o.proto == "http" ? o.proto : "";
  if (o.target.empty() || o.target[0] != '/' || !plain_text(o.target, true) || o.host.empty() ||
      o.host.size() > 255 || !plain_text(o.host, false) || o.method.size() > 16 ||
      !plain_text(o.method, false)) {
    return std::nullopt;
  }
  return o;
}

bool is_browser(const ApiRequest& req, const GateOriginal& o) {
  return (o.method == "GET" || o.method == "HEAD") &&
         req.accept.find("text/html") != std::string_view::npos;
}

}  // namespace

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

std::string random_cookie_key() {
  unsigned char b[24];
  if (RAND_bytes(b, sizeof b) != 1) std::abort();
  return base64url_encode(std::string_view(reinterpret_cast<char*>(b), sizeof b));
}

ApiResponse gate_allowed(std::string_view visitor) {
  ApiResponse res;
  res.status = 200;  // Envoy allows on exactly 200
  res.content_type.clear();
  // Always there, so a proxy copying it to the origin never passes a visitor's own (or, on
  // Caddy 2.6, a placeholder's text).
  res.headers.emplace_back("X-Anteroom-Visitor", std::string(visitor));
  return res;
}

ApiResponse gate_redirect(const std::string& location) {
  ApiResponse res;
  res.status = 302;
  res.content_type.clear();
  res.headers.emplace_back("Location", location);
  return res;
}

ApiResponse Api::forward_auth(const ApiRequest& req,
                              std::optional<std::string_view> authz_path) const {
  if (!req.trusted_peer) {
    return error_response(400, "untrusted_proxy",
                          "the gate believes what a proxy says of the original request only "
                          "from a --trusted-proxy peer");
  }
  std::string why;
  auto o = read_original(req, authz_path, &why);
  if (!o) {
    return error_response(400, "no_original_request",
                          !why.empty() ? why
                                       : "say which request to decide: X-Forwarded-Uri and "
                                         "X-Forwarded-Host (Traefik, Caddy), X-Original-URL, or "
                                         "X-Original-URI and X-Forwarded-Host (nginx), or the "
                                         "path under /v1/authz (Envoy)");
  }
  auto path = plain_path(o->target);
  if (!path) return error_response(400, "invalid_path", "the request's path does not decode");
  auto a = std::make_shared<GateAsk>();
  a->index = gate_index();
  // The path as sent, before decoding: a rule must not miss what an origin routes on raw.
  const std::string_view raw = std::string_view(o->target).substr(0, o->target.find('?'));
  a->room = a->index->find(o->host, *path, raw);
  if (a->room == nullptr) {
    metrics_.gate().count(GateOutcome::kUnprotected);
    return gate_allowed("-");
  }
  const GateSettings& g = a->room->settings;
  const GateRequest asked{o->method,  *path,       req.client, req.user_agent,
                          req.cookie, req.headers, raw};
  for (const BypassRule& rule : g.bypass) {
    if (bypasses(rule, asked)) {
      metrics_.gate().count(GateOutcome::kBypassed);
      metrics_.gate().bypassed(a->room->name, rule.name);
      return gate_allowed("bypass:" + rule.name);
    }
  }
  if (pass_admits(*a->room, req.cookie)) {
    metrics_.gate().count(GateOutcome::kPass);
    return gate_allowed("pass");
  }
  a->browser = is_browser(req, *o);
  a->client = std::string(req.client);
  a->pass_cookies = o->nginx_way || g.gate_cookies_pass;
  // nginx's fast pass: asked for by its config (the host it will check it against), given
  // only where the host is this room's alone.
  if (o->nginx_way && !options_.fast_pass_secret.empty()) {
    std::string fast = fast_pass_host(header(req, "X-Anteroom-Fast-Host"));
    if (!fast.empty() && a->index->sole_room(fast, a->room)) a->fast_host = std::move(fast);
  }
  a->base = !options_.public_url.empty() ? std::string(options_.public_url.substr(
                                               0, options_.public_url.find_last_not_of('/') + 1))
                                         : (o->proto.empty() ? "http" : o->proto) + "://" + o->host;
  a->o = std::move(*o);
  return answer_when([&](const Respond& respond) {
    check_admission(a->room->name, req.cookie, [this, a, respond](std::optional<Admitted> got) {
      if (got) return gate_allow(*a, *got, respond);
      gate_not_admitted(a, respond);
    });
  });
}

}  // namespace anteroom
