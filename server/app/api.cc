// Api: how a request finds its row of the route table and what the row asks of it, the
// status object, and the few routes with no resource of their own.
#include "server/app/api.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>

#include "engine/fair_draw.h"
#include "server/app/cross_site.h"
#include "server/app/gate_index.h"
#include "server/app/json_text.h"
#include "server/app/push_hub.h"
#include "server/app/route_table.h"
#include "server/app/wait_page.h"

namespace anteroom {
namespace json = boost::json;

int64_t unix_now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// How long a poller should wait: a second near the head of the line, longer further back,
// so that the total poll rate grows slower than the line (10,000 waiting poll at about
// 1,300 requests a second instead of 10,000). A little jitter from the ticket id keeps
// pollers from moving in step.
unsigned poll_after_ms(const TicketView& v) {
  if (v.state == TicketState::kWaiting) {
    uint64_t base = std::clamp<uint64_t>(v.position * 2, 1000, 30'000);
    unsigned jitter = static_cast<unsigned char>(v.id[5]) % 16;  // 0-15 -> up to ~10%
    return static_cast<unsigned>(base + base * jitter / 160);
  }
  return is_live(v.state) ? 5000 : 0;
}

}  // namespace

Api::Api(RoomService& engine, const TokenSigner& tokens, Metrics& metrics, const Options& options,
         std::string admin_key, const PushHub* hub)
    : engine_(engine),
      tokens_(tokens),
      metrics_(metrics),
      options_(options),
      admin_key_(std::move(admin_key)),
      hub_(hub),
      wall_minus_engine_ms_(unix_now_ms() - engine.clock().now_ms()) {
  unsigned char key[32];
  if (RAND_bytes(key, sizeof key) != 1) std::abort();
  pow_ = std::make_unique<ProofOfWork>(std::string_view(reinterpret_cast<char*>(key), sizeof key));
  if (RAND_bytes(key, sizeof key) != 1) std::abort();
  link_key_.assign(reinterpret_cast<char*>(key), sizeof key);
}

namespace {

// The credential of an `Authorization: Bearer <credential>` header: the scheme in any case
// (RFC 6750 via RFC 7235), then one or more spaces. Empty if the header is anything else.
std::string_view bearer_credential(std::string_view header) {
  constexpr std::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size() || header[kScheme.size()] != ' ') return {};
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return {};
  }
  std::string_view rest = header.substr(kScheme.size());
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  return rest;
}

// Constant time in the credential's content (its length is not secret).
bool same_secret(std::string_view given, std::string_view want) {
  return !want.empty() && given.size() == want.size() &&
         CRYPTO_memcmp(given.data(), want.data(), want.size()) == 0;
}

}  // namespace

bool Api::authorized(std::string_view header) const {
  return same_secret(bearer_credential(header), admin_key_);
}

bool Api::may_verify(std::string_view header) const {
  const std::string_view given = bearer_credential(header);
  return same_secret(given, admin_key_) || same_secret(given, options_.verify_key);
}

bool Api::may_scrape(std::string_view header) const {
  const std::string_view given = bearer_credential(header);
  return same_secret(given, admin_key_) || same_secret(given, options_.verify_key) ||
         same_secret(given, options_.metrics_key);
}

bool Api::stream_allowed(std::string_view room, std::string_view ticket) const {
  return hub_ == nullptr || hub_->streams_for(std::string(room), std::string(ticket)) <
                                options_.max_streams_per_ticket;
}

int64_t Api::now_ms() const { return engine_.clock().now_ms() + wall_minus_engine_ms_; }

std::string Api::token_for(std::string_view room, const TicketView& v) const {
  if (!holds_slot(v.state)) return {};
  auto detail = engine_.describe(room, id_view(v.id));
  if (!detail.is_ok()) return {};
  TokenClaims c;
  c.ticket = std::string(id_view(v.id));
  c.room = std::string(room);
  c.user = detail->user;
  if (detail->key_hash) c.key_hash = key_hash_hex(*detail->key_hash);
  c.issued_at = now_ms() / 1000;
  // Valid as long as the admission is: until it must be used (ALLOWED), or until the
  // session's idle deadline (ACTIVE). Every refresh (gate, verify) issues a fresh one, so a
  // visitor using the service never holds a dead token.
  c.expires_at = (v.valid_until_ms + wall_minus_engine_ms_ + 999) / 1000;
  return tokens_.sign(c);
}

std::string Api::status_json(std::string_view room, const TicketView& v) const {
  // Built by hand: every string here is from a safe alphabet (room names, ids, tokens).
  std::string out;
  out.reserve(256);
  char buf[160];
  out += R"({"room":")";
  out += room;
  out += R"(","ticket":")";
  out += id_view(v.id);
  out += R"(","status":")";
  out += state_name(v.state);
  out += R"(","ref":")";
  out += ref_hex(ticket_ref(id_view(v.id)));
  std::snprintf(buf, sizeof buf, R"(","seq":%llu,"position":)",
                static_cast<unsigned long long>(v.seq));
  out += buf;
  if (v.position_hidden) {
    out += "null";
  } else {
    out += std::to_string(v.position);
  }
  if (v.mode != RoomMode::kFifo) {
    out += R"(,"mode":")";
    out += mode_name(v.mode);
    out += '"';
  }
  if (v.lanes != 0) {  // the lane's name, as the room's lanes give it (operator text: escaped)
    const GateIndexRoom* g = gate_index()->room(room);
    const std::string name = g != nullptr && v.lane < g->settings.lane_names.size()
                                 ? g->settings.lane_names[v.lane]
                                 : "lane" + std::to_string(v.lane);
    out += R"(,"lane":)";
    out += json::serialize(json::string(name));
  }
  if (v.opens_at_ms != 0) {
    out += R"(,"opens_at":")";
    out += rfc3339(v.opens_at_ms);
    out += '"';
  }
  std::snprintf(buf, sizeof buf, R"(,"waiting":%llu,"active":%llu,"capacity":%u,)",
                static_cast<unsigned long long>(v.waiting),
                static_cast<unsigned long long>(v.active), v.capacity);
  out += buf;
  if (v.eta_high_seconds) {
    out += R"("eta_high_seconds":)";
    out += json_number(std::round(*v.eta_high_seconds * 10) / 10);
    out += ',';
  }
  out += R"("eta_seconds":)";
  out += v.eta_seconds ? json_number(std::round(*v.eta_seconds * 10) / 10) : "null";
  out += ',';
  std::snprintf(buf, sizeof buf, R"("poll_after_ms":%u)", poll_after_ms(v));
  out += buf;
  if (v.reason != EndReason::kNone) {
    out += R"(,"reason":")";
    out += reason_name(v.reason);
    out += '"';
  }
  if (std::string token = token_for(room, v); !token.empty()) {
    out += R"(,"token":")";
    out += token;
    out += '"';
  }
  out += '}';
  return out;
}

namespace {

ApiResponse with(ApiResponse r, Route route) {
  r.route = route;
  return r;
}

bool serves(Audience audience, bool operator_listener) {
  return audience == Audience::kBoth || (audience == Audience::kOperator) == operator_listener;
}

// The row a request is for. `allowed`: every method of the rows its path matches on this
// listener (for 405's Allow); `first`: the first of them; `reserved`: whether any is;
// `elsewhere`: the other listener serves the method there (an operator's PUT of an event
// on the visitors' listener is no route, not a wrong method).
struct Found {
  const RouteRow* row = nullptr;
  const RouteRow* first = nullptr;
  uint8_t allowed = 0;
  bool reserved = false;
  bool elsewhere = false;
  std::string_view room, ticket;
};

Found find_row(std::string_view method, std::string_view path, bool split, bool on_operator) {
  Found f;
  const uint8_t bit = method_bit(method);
  for (const RouteRow& row : route_table()) {
    std::string_view room, ticket;
    if (!match_pattern(row.pattern, path, &room, &ticket)) continue;
    if (split && !serves(row.audience, on_operator)) {
      f.elsewhere = f.elsewhere || (row.methods & bit) != 0;
      continue;
    }
    if (f.first == nullptr) f.first = &row;
    f.allowed |= row.methods;
    f.reserved = f.reserved || row.reserve;
    if ((row.methods & bit) != 0) {
      f.row = &row;
      f.room = room;
      f.ticket = ticket;
      return f;
    }
  }
  return f;
}

}  // namespace

bool Api::allowed(const ApiRequest& req, Auth auth) const {
  switch (auth) {
    case Auth::kNone:
      return true;
    case Auth::kAdmin:
      return authorized(req.authorization);
    case Auth::kVerify:
      return may_verify(req.authorization);
    case Auth::kScrape:
      // Room names and counts are the operator's, and a render costs O(rooms): a key,
      // unless on the operator listener or opened with --metrics-public.
      return options_.metrics_public || req.operator_listener || may_scrape(req.authorization);
  }
  return false;
}

ApiResponse Api::handle(const ApiRequest& req) const {
  if (!req.target.starts_with('/')) {  // absolute-form or garbage: nothing of ours
    return with(error_response(404, "not_found", "no such route"), Route::kNotFound);
  }
  std::string_view path = req.target, query;
  if (size_t q = path.find('?'); q != std::string_view::npos) {
    query = path.substr(q + 1);
    path = path.substr(0, q);
  }
  // With --admin-listen, operator routes are answered there only and visitor routes
  // everywhere else: a row of the other listener is no route here.
  const Found f = find_row(req.method, path, !options_.admin_listen.empty(), req.operator_listener);
  // Down to the operator reserve: the reserved rows (the probes, metrics, the gate and
  // verify, which serve visitors already admitted, the dashboard's page) and requests
  // carrying the admin key.
  if (req.reserve_only && !f.reserved && !authorized(req.authorization)) {
    return with(error_response(503, "overloaded", "too many open connections, try again soon"),
                Route::kNotFound);
  }
  // A write from a page on another site (a form, a script, a WebSocket: ENTER joins) is
  // refused before it reaches any route, so it changes nothing.
  // The forward-auth gate is asked about a visitor's request, whatever its method: it
  // writes nothing of the asker's.
  const bool gate = f.row != nullptr && f.row->route == Route::kForwardAuth;
  const bool writes =
      !gate && ((req.method != "GET" && req.method != "HEAD") || (f.row && f.row->writes));
  if (writes && from_another_site({req.origin, req.sec_fetch_site, req.host, req.forwarded_host},
                                  options_.public_url, options_.allow_origins)) {
    return with(error_response(403, "cross_site",
                               "a request from a page on another site may not change "
                               "anything here (Origin / Sec-Fetch-Site)"),
                Route::kCrossSite);
  }
  if (f.first == nullptr || (f.row == nullptr && f.elsewhere)) {
    return with(error_response(404, "not_found", "no such route"), Route::kNotFound);
  }
  if (f.row == nullptr) return method_not_allowed(allow_header(f.allowed), f.first->route);
  const RouteRow& row = *f.row;
  if (!allowed(req, row.auth)) {
    if (row.auth != Auth::kScrape) return with(unauthorized(), row.route);
    ApiResponse no =
        error_response(401, "unauthorized",
                       "/metrics needs Authorization: Bearer <the admin, verify or metrics key>");
    no.headers.emplace_back("WWW-Authenticate", "Bearer");
    return with(no, row.route);
  }
  if (row.pattern.find("{room}") != std::string_view::npos && !valid_room_name(f.room)) {
    // The gate answers a proxy's auth subrequest, which takes only 2xx, 401 and 403 (nginx
    // makes anything else a 500): no room of such a name admits anyone.
    if (row.route == Route::kGate) {
      return with(error_response(401, "no_admission", "no valid admission: not a room name"),
                  row.route);
    }
    return with(error_response(400, "invalid_room_name",
                               "room names are 1-64 characters of A-Z a-z 0-9 _ -"),
                row.route);
  }
  return with(row.handler(*this, RouteCall{req, query, f.room, f.ticket}), row.route);
}

// /healthz and /readyz.
ApiResponse Api::probe_route(bool ready_probe) const {
  ApiResponse r;
  if (!ready_probe) {
    r.body = R"({"ok":true})";
    return r;
  }
  if (!ready_.load(std::memory_order_relaxed)) {
    return error_response(503, "not_ready", "the server is shutting down");
  }
  if (Status st = engine_.health(); !st.is_ok()) {
    const char* code = engine_.cluster_view() != nullptr ? "redis_unreachable" : "storage_failed";
    return error_response(503, code, st.message());
  }
  r.body = R"({"ready":true})";
  return r;
}

ApiResponse Api::metrics_route() const {
  ApiResponse r;
  r.content_type = "text/plain; version=0.0.4";
  r.body = metrics_.render(options_.room_metrics);
  return r;
}

ApiResponse Api::jwks_route() const {
  // The public keys (ES256; none for HS256). Clients refetch on an unknown kid, and a new
  // key comes only with a restart, which keeps the previous one here while rotating.
  ApiResponse r;
  r.content_type = "application/jwk-set+json";
  r.body = tokens_.jwks();
  r.headers.emplace_back("Cache-Control", "public, max-age=300");
  return r;
}

ApiResponse Api::wait_route(const ApiRequest& req, std::string_view room,
                            std::string_view query) const {
  auto info = engine_.room_info(room);
  const Branding brand = info.is_ok() ? Branding::from_json(info->config.page) : Branding{};
  ApiResponse res = wait_page(room, query, req.accept_language, req.return_header, brand);
  // The room's queueing_status_code (200 by default): what a crawler or a monitor sees.
  if (const GateIndexRoom* g = gate_index()->room(room)) {
    res.status = g->settings.queueing_status_code;
    if (res.status == 429 || res.status == 503) res.headers.emplace_back("Retry-After", "10");
  }
  return res;
}

}  // namespace anteroom
