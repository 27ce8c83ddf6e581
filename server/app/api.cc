// Api: routing, the visitor routes and the status object.
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
#include "server/app/json_text.h"
#include "server/app/push_hub.h"
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

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t i = 1;  // skip the leading '/'
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
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

ApiResponse answer_when(const std::function<void(Respond)>& start) {
  struct Pending {
    std::mutex mu;
    std::optional<ApiResponse> ready;  // came before anyone asked for it
    Respond sink;                      // asked for before it came
  };
  auto p = std::make_shared<Pending>();
  start([p](ApiResponse r) {
    Respond sink;
    {
      std::lock_guard lock(p->mu);
      if (!p->sink) {
        p->ready = std::move(r);
        return;
      }
      sink = std::move(p->sink);
    }
    sink(std::move(r));
  });
  {
    std::lock_guard lock(p->mu);
    if (p->ready) return std::move(*p->ready);  // answered at once: the common case
  }
  ApiResponse deferred;
  deferred.later = [p](Respond sink) {
    std::optional<ApiResponse> ready;
    {
      std::lock_guard lock(p->mu);
      if (p->ready) {
        ready = std::move(p->ready);
      } else {
        p->sink = std::move(sink);
        return;
      }
    }
    sink(std::move(*ready));
  };
  return deferred;
}

ApiResponse error_response(unsigned status, std::string_view code, std::string_view message) {
  ApiResponse r;
  r.status = status;
  json::object err;
  err["code"] = code;
  err["message"] = message;
  json::object body;
  body["error"] = std::move(err);
  r.body = json::serialize(body);
  if (status == 503) r.headers.emplace_back("Retry-After", "5");
  return r;
}

ApiResponse method_not_allowed(const char* allow, Route r) {
  ApiResponse res =
      error_response(405, "method_not_allowed", "this path takes only " + std::string(allow));
  res.headers.emplace_back("Allow", allow);
  res.route = r;
  return res;
}

ApiResponse engine_error(const Status& st) {
  unsigned status = 400;
  switch (st.code()) {
    case Code::kRoomNotFound:
    case Code::kTicketNotFound:
      status = 404;
      break;
    case Code::kRoomFull:
    case Code::kUnavailable:
    case Code::kStorageFailed:
    case Code::kRoomClosed:
      status = 503;
      break;
    case Code::kWrongState:
      status = 409;
      break;
    default:
      status = 400;
  }
  ApiResponse r = error_response(status, code_name(st.code()), st.message());
  // Unavailable (a cluster node cut off from Redis reconnects every half second) passes
  // soon: a second, not the five every other 503 says.
  if (st.code() == Code::kUnavailable) {
    std::erase_if(r.headers, [](const auto& h) { return h.first == "Retry-After"; });
    r.headers.emplace_back("Retry-After", "1");
  }
  return r;
}

Api::Api(Engine& engine, const TokenSigner& tokens, Metrics& metrics, const Options& options,
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

bool Api::reserved_for(const ApiRequest& req) const {
  std::string_view path = req.target.substr(0, req.target.find('?'));
  // Also the gate and verify: they serve visitors already admitted, who must keep getting
  // in while a flood holds the rest.
  // The dashboard's page too: it holds no data, and the operator needs it most in a flood
  // (its calls carry the key).
  return path == "/healthz" || path == "/readyz" || path == "/metrics" || path == "/admin" ||
         path.starts_with("/v1/gate/") || path.ends_with("/verify") ||
         authorized(req.authorization);
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

ApiResponse Api::handle(const ApiRequest& req) const {
  if (!req.target.starts_with('/')) {  // absolute-form or garbage: nothing of ours
    ApiResponse r = error_response(404, "not_found", "no such route");
    r.route = Route::kNotFound;
    return r;
  }
  std::string_view path = req.target, query;
  if (req.reserve_only && !reserved_for(req)) {
    ApiResponse r = error_response(503, "overloaded", "too many open connections, try again soon");
    r.route = Route::kNotFound;
    return r;
  }
  if (size_t q = path.find('?'); q != std::string_view::npos) {
    query = path.substr(q + 1);
    path = path.substr(0, q);
  }
  // A write from a page on another site (a form, a script, a WebSocket: ENTER joins) is
  // refused before it reaches any route, so it changes nothing.
  const bool writes = (req.method != "GET" && req.method != "HEAD") || path.ends_with("/ws");
  if (writes && from_another_site({req.origin, req.sec_fetch_site, req.host, req.forwarded_host},
                                  options_.public_url, options_.allow_origins)) {
    ApiResponse r = error_response(403, "cross_site",
                                   "a request from a page on another site may not change "
                                   "anything here (Origin / Sec-Fetch-Site)");
    r.route = Route::kCrossSite;
    return r;
  }
  if (!options_.admin_listen.empty() && !both_listeners(path) &&
      operator_route(req.method, path) != req.operator_listener) {
    ApiResponse r = error_response(404, "not_found", "no such route");
    r.route = Route::kNotFound;
    return r;
  }
  ApiResponse res = route(req, path, query);
  return res;
}

bool Api::both_listeners(std::string_view path) {
  if (path == "/healthz" || path == "/readyz") return true;
  // /v1/rooms/{room}/verify exactly (a room may be named "verify").
  const std::vector<std::string_view> p = split_path(path);
  return p.size() == 4 && p[0] == "v1" && p[1] == "rooms" && p[3] == "verify";
}

bool Api::operator_route(std::string_view method, std::string_view path) {
  if (path == "/metrics" || path == "/admin" || path.starts_with("/v1/admin/") ||
      path == "/v1/cluster" || path == "/v1/rooms" || path == "/v1/rooms/") {
    return true;
  }
  if (!path.starts_with("/v1/rooms/")) return false;
  const std::vector<std::string_view> p = split_path(path);  // v1 rooms {room} ...
  if (p.size() == 3) return true;                            // the room itself
  if (p.size() != 4) return false;
  if (p[3] == "admit" || p[3] == "clear") return true;
  // An event or page is read by visitors, written by operators.
  return (p[3] == "event" || p[3] == "page") && method != "GET" && method != "HEAD";
}

namespace {

ApiResponse with(ApiResponse r, Route route) {
  r.route = route;
  return r;
}

}  // namespace

// /healthz and /readyz.
ApiResponse Api::probe_route(bool ready_probe) const {
  ApiResponse r;
  if (!ready_probe) {
    r.body = R"({"ok":true})";
    return with(r, Route::kHealth);
  }
  if (!ready_.load(std::memory_order_relaxed)) {
    return with(error_response(503, "not_ready", "the server is shutting down"), Route::kReady);
  }
  if (Status st = engine_.health(); !st.is_ok()) {
    const char* code = engine_.cluster_info() ? "redis_unreachable" : "storage_failed";
    return with(error_response(503, code, st.message()), Route::kReady);
  }
  r.body = R"({"ready":true})";
  return with(r, Route::kReady);
}

ApiResponse Api::route(const ApiRequest& req, std::string_view path, std::string_view query) const {
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (path == "/healthz" || path == "/readyz") {
    const bool ready = path == "/readyz";
    if (!get) return method_not_allowed("GET", ready ? Route::kReady : Route::kHealth);
    return probe_route(ready);
  }
  if (path == "/metrics") {
    if (!get) return method_not_allowed("GET", Route::kMetrics);
    // Room names and counts are the operator's, and a render costs O(rooms): a key, unless
    // on the operator listener or opened with --metrics-public.
    if (!options_.metrics_public && !req.operator_listener && !may_scrape(req.authorization)) {
      ApiResponse no =
          error_response(401, "unauthorized",
                         "/metrics needs Authorization: Bearer <the admin, verify or metrics key>");
      no.headers.emplace_back("WWW-Authenticate", "Bearer");
      return with(no, Route::kMetrics);
    }
    ApiResponse r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = metrics_.render(engine_, options_.room_metrics);
    return with(r, Route::kMetrics);
  }
  if (path == "/.well-known/jwks.json") {
    if (!get) return method_not_allowed("GET", Route::kJwks);
    // The public keys (ES256; none for HS256). Clients refetch on an unknown kid, and a new
    // key comes only with a restart, which keeps the previous one here while rotating.
    ApiResponse r;
    r.content_type = "application/jwk-set+json";
    r.body = tokens_.jwks();
    r.headers.emplace_back("Cache-Control", "public, max-age=300");
    return with(r, Route::kJwks);
  }
  std::vector<std::string_view> parts = split_path(path);
  if (parts.size() == 2 && parts[0] == "wait") {
    if (!get) return method_not_allowed("GET", Route::kWaitPage);
    if (!valid_room_name(parts[1])) {
      return with(error_response(400, "invalid_room_name",
                                 "room names are 1-64 characters of A-Z a-z 0-9 _ -"),
                  Route::kWaitPage);
    }
    auto info = engine_.room_info(parts[1]);
    const Branding brand = info.is_ok() ? Branding::from_json(info->config.page) : Branding{};
    return with(wait_page(parts[1], query, req.accept_language, req.return_header, brand),
                Route::kWaitPage);
  }
  if (parts.size() == 3 && parts[0] == "v1" && parts[1] == "gate") {
    if (!get) return method_not_allowed("GET", Route::kGate);
    return with(gate_route(parts[2], req.cookie), Route::kGate);
  }
  if (auto dash = dashboard_route(req, parts)) return std::move(*dash);
  if (parts.size() == 3 && parts[0] == "v1" && parts[1] == "admin" && parts[2] == "snapshot") {
    if (req.method != "POST") return method_not_allowed("POST", Route::kSnapshot);
    if (!authorized(req.authorization)) return with(unauthorized(), Route::kSnapshot);
    return with(snapshot_route(), Route::kSnapshot);
  }
  if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "cluster") {
    if (!get) return method_not_allowed("GET", Route::kCluster);
    if (!authorized(req.authorization)) return with(unauthorized(), Route::kCluster);
    return with(cluster_route(), Route::kCluster);
  }
  if (parts.size() >= 2 && parts[0] == "v1" && parts[1] == "rooms") {
    return rooms_route(req, parts);
  }
  return with(error_response(404, "not_found", "no such route"), Route::kNotFound);
}

}  // namespace anteroom
