// The HTTP API (docs/api.md) as plain functions of a request: no sockets, no Beast.
// Sessions parse bytes into an ApiRequest, call Api::handle, and write the ApiResponse (or,
// for the SSE and WebSocket routes, turn the connection into a stream).
//
// Thread safety: Api is immutable after construction apart from the engine and metrics it
// points to, which are thread-safe, and the cache of draw answers, under its own mutex; call
// handle() from any thread.
#pragma once

#include <array>
#include <atomic>
#include <boost/json/object.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/cluster_view.h"
#include "engine/room_service.h"
#include "server/app/join_limiter.h"
#include "server/app/keys.h"
#include "server/app/metrics.h"
#include "server/app/options.h"
#include "server/app/proof_of_work.h"
#include "server/app/token.h"

namespace anteroom {

// Any header of a request by name (any case), for what the fields below do not name (the
// forward-auth gate reads the proxy's X-Forwarded-* and X-Original-*, and a bypass rule any
// header). Empty when absent.
class HeaderLookup {
 public:
  virtual ~HeaderLookup() = default;
  virtual std::string_view get(std::string_view name) const = 0;
};

struct ApiRequest {
  std::string_view method;  // "GET", "POST", ...
  std::string_view target;  // path and query
  std::string_view authorization;
  std::string_view cookie;  // every Cookie header, joined with "; "
  std::string_view accept_language;
  std::string_view return_header;  // X-Anteroom-Return: where the waiting page goes back to
                                   // when there is no ?return= (set by nginx, see deploy/)
  std::string_view if_none_match;  // If-None-Match: a cached answer's ETag (the draw)
  // Where a browser request comes from (cross_site.h): a state-changing one from another
  // site is refused 403 cross_site.
  std::string_view origin;          // Origin
  std::string_view sec_fetch_site;  // Sec-Fetch-Site
  std::string_view host;            // Host
  std::string_view forwarded_host;  // X-Forwarded-Host, set only when the peer is trusted
  std::string_view accept;          // Accept
  std::string_view user_agent;      // User-Agent
  // The peer is a --trusted-proxy: what it says of the original request is believed.
  bool trusted_peer = false;
  const HeaderLookup* headers = nullptr;  // every other header; null: none
  std::string_view body;
  // The client's address as bytes (4 for IPv4, the /64 of IPv6): the peer, or behind a trusted
  // proxy the rightmost X-Forwarded-For address not itself trusted. Empty
  // when unknown (tests that call the Api directly).
  std::string_view client;
  // The server is down to its operator reserve: answer only health, readiness, metrics, the
  // gate, verify and requests carrying the admin key; everything else gets 503 overloaded.
  bool reserve_only = false;
  // Came in on --admin-listen: with one configured, operator routes are answered there only
  // and visitor routes everywhere else (each route table row says which: route_table.h).
  bool operator_listener = false;
};

// An admission cookie's value (gate.cc): TOKEN, or TOKEN~KEY for a bound ticket.
struct AdmissionParts {
  std::string token;
  std::string key;  // empty: none in the cookie
};
AdmissionParts split_admission(std::string_view value);

struct ApiResponse;
// Takes a response that was not ready when Api::handle returned (any thread).
using Respond = std::function<void(ApiResponse)>;

struct ApiResponse {
  enum class Upgrade { kNone, kSse, kWebSocket, kDashboard };
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  // A large answer many clients fetch alike (a draw): sent instead of `body`, shared by every
  // response that holds it, never copied.
  std::shared_ptr<const std::string> shared_body;
  std::vector<std::pair<std::string, std::string>> headers;
  Route route = Route::kNotFound;
  Upgrade upgrade = Upgrade::kNone;
  std::string room;    // for upgrades
  std::string ticket;  // for SSE
  // Set when the answer is not ready yet (a join waiting to be durable, a cluster node's
  // write waiting for its record): the transport calls later(respond) once, and sends what
  // respond gets (on any thread) instead of this response, whose route it keeps.
  std::function<void(Respond)> later;
};

// Runs start(done) now. If done(response) comes before start returns, that response is
// returned as it is; otherwise the returned response's `later` hands it over when it comes.
ApiResponse answer_when(const std::function<void(Respond)>& start);

// Wall-clock seconds since the Unix epoch, for token claims.
int64_t unix_now_s();

enum class Auth : uint8_t;  // route_table.h

class Api {
 public:
  // Times come from the engine's clock (admission times are on it).
  // `hub` (may be null) tells how many streams watch a ticket (--max-streams-per-ticket).
  Api(RoomService& engine, const TokenSigner& tokens, Metrics& metrics, const Options& options,
      std::string admin_key, const class PushHub* hub = nullptr);

  ApiResponse handle(const ApiRequest& req) const;
  // A proof of work as a join carries it.
  struct PowSolution {
    std::string challenge;
    std::string nonce;
  };
  // Why a join is refused before it reaches the room, or nullopt: a named
  // user without that user's user_token where --user-secret vouches for names (403
  // user_token_required), the proof of work the room asks for (403 pow_required /
  // pow_invalid), then the joins per address (429 rate_limited). A refused join is not counted
  // against the address. `client`: bytes of the client's address (ApiRequest::client); empty: not
  // limited.
  struct JoinRefusal {
    unsigned status = 0;
    const char* code = "";
    std::string message;
    uint32_t retry_after_s = 0;  // 429 only
  };
  // A proof of work this node took, still to be spent once for the whole cluster (a
  // cluster node's record of spent challenges is its own; Redis holds the cluster's).
  struct ClusterSpend {
    std::string key;  // empty: nothing to spend (no proof, or not a cluster node)
    int64_t ttl_ms = 0;
  };
  std::optional<JoinRefusal> refuse_join(std::string_view room, std::string_view client,
                                         const PowSolution* pow, const std::string& user = {},
                                         const UserProof& proof = {},
                                         ClusterSpend* once = nullptr) const;
  // then(true) if `once` is nothing to spend or its first use in the cluster, else
  // then(false): the proof was used at another node (or Redis could not say).
  void spend_once(const ClusterSpend& once, std::function<void(bool)> then) const;
  static constexpr const char* kPowUsed = "the challenge was already used; fetch a new one";
  // What an invite makes of a join (docs/api.md, "Invites and lanes"): in a room whose
  // join_requires is "invite" one is needed (403 invite_invalid without a valid one); in
  // any room a valid one names the user (its sub, *user: a given one must be the same) and
  // the lane (*lane, JoinRequest's), and proves the user (proof->invited).
  std::optional<JoinRefusal> invite_terms(std::string_view room,
                                          const std::optional<std::string>& invite,
                                          std::string* user, uint8_t* lane, UserProof* proof) const;
  // The key of proof-of-work challenges (derived from the token secret so that every node of
  // a cluster agrees); until set, a random one. Call before serving.
  void set_pow_key(std::string_view key) { pow_ = std::make_unique<ProofOfWork>(key); }
  // The key of the gate's signed links (/v1/enter, passes: gate_links.h), derived from the
  // token secret so that every node of a cluster takes every node's; until set, a random one.
  void set_link_key(std::string key) { link_key_ = std::move(key); }
  // What the dashboard's routes read (the server ticks it); until set, they answer 503.
  void set_dashboard(const class DashboardFeed* feed) { dashboard_ = feed; }

  // The status object of a ticket (docs/api.md), with its token once admitted.
  std::string status_json(std::string_view room, const TicketView& v) const;
  // A token for an ALLOWED or ACTIVE ticket; empty otherwise.
  std::string token_for(std::string_view room, const TicketView& v) const;
  // Joins and counts the join (the engine admits at once where a slot is free). A user's
  // existing ticket comes back with created false: hand it out only if proves_user().
  // `then` runs once the join is durable (RoomService::join_async).
  void join(std::string_view room, const JoinRequest& request,
            RoomService::Then<JoinResult> then) const;
  // Whether the joiner is the visitor who holds `user`'s place: the ticket's key, a user
  // assertion signed with --user-secret, or a room that trusts names (trust_user).
  bool proves_user(std::string_view room, const std::string& user, const UserProof& proof,
                   const JoinResult& r) const;
  // The Set-Cookie value of the admission cookie (gate.cc): a fresh token for an
  // ALLOWED/ACTIVE ticket and, for a bound ticket, its `key`, as TOKEN~KEY.
  std::string admission_cookie(std::string_view room, const TicketView& v,
                               std::string_view key = {}) const;
  // The cookie's value alone (TOKEN~KEY), the token valid to `until_ms` (engine clock; 0:
  // the ticket's own deadline), and the Set-Cookie of such a value.
  std::string admission_value(std::string_view room, const TicketView& v, std::string_view key,
                              int64_t until_ms = 0) const;
  std::string admission_set_cookie(std::string_view room, std::string_view value,
                                   int64_t max_age_s) const;
  // "; Secure" when --public-url is https, else "".
  std::string admission_cookie_name(std::string_view room) const;  // gate.cc
  const char* secure_attribute() const;
  // Verifies a token and activates its ticket (verify route and gate); `then` gets the
  // ticket, or why the token is no good.
  // A ticket bound to a key (key_sha256 at join) counts only with that key: one of `keys`
  // (the gate's key cookies, verify's "key") must hash to it, else kKeyRequired's refusal.
  void use_token(std::string_view room, std::string_view token,
                 const std::vector<std::string>& keys, RoomService::Then<TicketDetail> then) const;
  // use_token with a token already verified; `key_known`: keys[0] is known to hash to the
  // claims' cnf (the gate's memo), so it is not hashed again.
  void use_claims(std::string_view room, const TokenClaims& claims,
                  const std::vector<std::string>& keys, RoomService::Then<TicketDetail> then,
                  bool key_known = false) const;

  // All the routes see of the engine: reads, and writes answered when done.
  RoomService& engine() const { return engine_; }
  // Whether one more stream may watch this ticket (--max-streams-per-ticket).
  bool stream_allowed(std::string_view room, std::string_view ticket) const;
  // Wall-clock time read from the engine's clock (so tests that move the engine's clock move
  // token times too): milliseconds since the Unix epoch.
  int64_t now_ms() const;
  Metrics& metrics() const { return metrics_; }
  void set_ready(bool ready) { ready_.store(ready, std::memory_order_relaxed); }

 private:
  friend struct RouteTable;  // the route table (route_table.cc) calls the routes below
  // The routes, by resource. Api::handle has done what the route's row asks (method,
  // listener, reserve, key, a valid room name) before any of them runs.
  // Visitors (routes_visitor.cc, join.cc, gate.cc).
  ApiResponse join_route(std::string_view room, std::string_view body,
                         std::string_view client = {}) const;
  ApiResponse leave_route(std::string_view room, std::string_view ticket) const;
  ApiResponse ws_route(std::string_view room) const;
  ApiResponse gate_route(std::string_view room, std::string_view cookie) const;
  // What a valid admission cookie gave: the ticket, now ACTIVE, the key it is bound to, and
  // when the cookie's token ends (Unix s).
  struct Admitted {
    TicketDetail ticket;
    std::string key;
    int64_t cookie_expires_at = 0;
  };
  // Finds the admission among a request's cookies and uses it (ALLOWED -> ACTIVE, the
  // session refreshed); `done` (any thread) gets it, or nothing.
  void check_admission(std::string_view room, std::string_view cookies,
                       std::function<void(std::optional<Admitted>)> done) const;
  // The forward-auth gate (forward_auth.cc): GET /v1/gate, and /v1/authz/{path} for Envoy
  // (`authz_path`: the visitor's path under that prefix, with the query).
  ApiResponse forward_auth(const ApiRequest& req, std::optional<std::string_view> authz_path) const;
  // GET /v1/enter?t=... (a one-time link the gate made) or ?pass=... (a pass): sets the
  // cookie and sends the visitor back (enter_routes.cc).
  ApiResponse enter_route(const ApiRequest& req, std::string_view query) const;
  // POST, GET /v1/rooms/{room}/passes and DELETE /v1/rooms/{room}/passes/{id}.
  ApiResponse passes_route(const ApiRequest& req, std::string_view room, std::string_view id) const;
  // GET /wait: the waiting page of the room whose match rules fit the address to go back to.
  ApiResponse wait_any_route(const ApiRequest& req, std::string_view query) const;
  // The rooms' gate settings, built again when a room's configuration changed.
  std::shared_ptr<const class GateIndex> gate_index() const;
  // One question of the forward-auth gate on its way (forward_auth.cc).
  struct GateAsk;
  void gate_allow(const GateAsk& a, const Admitted& admitted, const Respond& respond) const;
  void gate_not_admitted(const std::shared_ptr<GateAsk>& a, const Respond& respond) const;
  void gate_deny(const GateAsk& a, const Respond& respond) const;
  // The admission cookie `value` to the visitor: on the 200 where the proxy passes it on,
  // else by a 302 through a one-time /v1/enter link (a browser's GET only; false if neither).
  // nginx's fast pass cookie (fast_pass.h) on an allowing answer, where the ask wants one.
  void add_fast_pass(const GateAsk& a, int64_t valid_s, ApiResponse* res) const;
  bool gate_set_cookie(const GateAsk& a, const std::string& value, int64_t max_age_s,
                       std::string_view visitor, const Respond& respond) const;
  // A valid pass among the cookies: signed, for this room, not revoked, not expired.
  bool pass_admits(const struct GateIndexRoom& room, std::string_view cookies) const;
  std::string pass_cookie_name(std::string_view room) const;
  // A cookie the gate may try (gate.cc): its token and key, the token's claims once
  // verified, and whether verifying it still costs a signature check.
  struct GateCandidate {
    std::string value;  // the cookie's value as sent
    AdmissionParts parts;
    TokenClaims claims;
    bool needs_check = false;
    bool remembered = false;  // from the memo (admission_memo.h): verified, its key matched
  };
  // The gate's next candidate (from `index` on), answered through `done`; `old_keys`: the
  // separate key cookies of earlier versions.
  void gate_try(const std::string& room, std::vector<GateCandidate> candidates,
                const std::vector<std::string>& old_keys, size_t index,
                std::function<void(std::optional<Admitted>)> done) const;
  // GET a ticket (status or events): answers, or waits until this copy of the room has
  // caught up if the ticket may be one it has not seen yet (a cluster node), then answers.
  ApiResponse ticket_read(std::string_view room, std::string_view ticket, bool events) const;
  ApiResponse ticket_read_now(std::string_view room, std::string_view ticket, bool events,
                              bool heartbeat) const;
  ApiResponse challenge_route(std::string_view room) const;  // join.cc
  ApiResponse cookie_route(std::string_view room, std::string_view ticket,
                           std::string_view body) const;
  // The waiting page and the token keys (api.cc).
  ApiResponse wait_route(const ApiRequest& req, std::string_view room,
                         std::string_view query) const;
  ApiResponse jwks_route() const;
  // Events and pages: GET for visitors, PUT and DELETE for operators (event_routes.cc,
  // page_routes.cc).
  ApiResponse event_route(const ApiRequest& req, std::string_view room) const;
  ApiResponse draw_route(const ApiRequest& req, std::string_view room) const;
  // The draw's answer and its ETag, built once per draw.
  std::pair<std::shared_ptr<const std::string>, std::string> draw_body(std::string_view room,
                                                                       const DrawInfo& d) const;
  ApiResponse page_route(const ApiRequest& req, std::string_view room) const;
  // Operators (routes_operator.cc; the dashboard's in dashboard_routes.cc).
  ApiResponse list_rooms() const;
  ApiResponse get_room(std::string_view room) const;
  ApiResponse put_room(std::string_view room, std::string_view body) const;
  ApiResponse delete_room(std::string_view room) const;
  ApiResponse admit_route(std::string_view room, std::string_view body) const;
  ApiResponse clear_route(std::string_view room) const;
  ApiResponse verify_route(std::string_view room, std::string_view body) const;
  ApiResponse snapshot_route() const;
  ApiResponse cluster_route() const;
  ApiResponse reseed_route() const;
  ApiResponse metrics_route() const;
  ApiResponse dashboard_stream_route() const;
  ApiResponse room_history_route(std::string_view room) const;
  ApiResponse probe_route(bool ready_probe) const;
  bool authorized(std::string_view header) const;  // the admin key
  bool may_verify(std::string_view header) const;  // the admin key or --verify-key
  bool may_scrape(std::string_view header) const;  // either, or --metrics-key
  // Whether the request carries the key `auth` asks for (route_table.h).
  bool allowed(const ApiRequest& req, Auth auth) const;
  ApiResponse unauthorized() const;

  RoomService& engine_;
  const TokenSigner& tokens_;
  Metrics& metrics_;
  const Options& options_;
  const std::string admin_key_;
  const PushHub* hub_;
  const class DashboardFeed* dashboard_ = nullptr;
  const int64_t wall_minus_engine_ms_;  // wall clock minus the engine's clock, at start
  std::atomic<bool> ready_{true};       // lone flag: relaxed
  // The last draw answer of each room (draw_body), built once.
  struct CachedDraw {
    std::array<uint8_t, 32> seed{};
    size_t count = 0;
    std::shared_ptr<const std::string> body;
    std::string etag;  // of body: a quoted hex SHA-256 prefix
  };
  std::unique_ptr<JoinLimiter> join_limiter_ = std::make_unique<JoinLimiter>();
  std::unique_ptr<ProofOfWork> pow_;  // set in the constructor or by set_pow_key
  std::string link_key_;              // set in the constructor or by set_link_key
  mutable std::mutex gate_mu_;        // one rebuilds the gate index at a time
  mutable std::atomic<std::shared_ptr<const class GateIndex>> gate_index_;
  mutable std::atomic<uint64_t> gate_version_{0};
  mutable std::mutex draw_cache_mu_;
  mutable std::map<std::string, CachedDraw> draw_cache_;
};

// 409 user_in_line: a join named a user whose place belongs to another visitor.
ApiResponse user_in_line();
// The error body: {"error":{"code":...,"message":...}}.
ApiResponse error_response(unsigned status, std::string_view code, std::string_view message);
// Unix ms as RFC 3339 in UTC with milliseconds ("2026-12-01T01:00:00.000Z").
std::string rfc3339(int64_t unix_ms);
// An RFC 3339 time ("2026-12-01T10:00:00Z", "...T19:00:00.250+09:00") as Unix ms; nullopt for
// anything else, dates that do not exist included.
std::optional<int64_t> parse_rfc3339(std::string_view text);
// 405 with the Allow header, counted under `r`.
ApiResponse method_not_allowed(std::string_view allow, Route r);
// An engine error as an HTTP error (404 for unknown room or ticket, 503 for a full room...).
ApiResponse engine_error(const Status& st);
// A request body that must be a JSON object (`allow_empty`: an empty body reads as {}). On
// failure, nullopt with *err set to the 400 answer.
std::optional<boost::json::object> parse_object(std::string_view body, ApiResponse* err,
                                                bool allow_empty);

}  // namespace anteroom
