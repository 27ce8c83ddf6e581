// The rows of every flag (flag_rows.h). The help texts are --help's; a default is the
// Options field's initializer, shown by --help.
#include "server/app/flag_rows.h"

#include <algorithm>
#include <cctype>

#include "server/app/secrets.h"

namespace anteroom {
namespace {

template <auto Member>
auto& field(Options& o) {
  return o.*Member;
}
template <auto Member>
auto& room(Options& o) {
  return o.room.*Member;
}

constexpr char kUrlSafe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

// clang-format off
const FlagRow kRows[] = {
    {.name = "help", .target = std::monostate{}, .help = "print this and exit"},
    {.name = "config", .target = &field<&Options::config>, .help = "FILE of `name = value` lines, one for any flag here, and [room NAME] sections (docs/server.md); flags and ANTEROOM_* variables win over it"},
    {.name = "access-log", .target = &field<&Options::access_log>, .help = "PATH, or - for standard output: one JSON line per request (docs/server.md), PATH reopened on SIGHUP; off by default"},
    {.name = "listen", .target = &field<&Options::listen>, .help = "HOST:PORT to listen on; port 0 picks a free port and prints it"},
    {.name = "admin-listen", .target = &field<&Options::admin_listen>, .help = "HOST:PORT of a listener of its own for the operator routes (rooms, admit, clear, events and pages written, snapshot, cluster, metrics); --listen then answers them 404"},
    {.name = "public-url", .target = &field<&Options::public_url>, .help = "the URL visitors reach anteroom at (https://queue.example.com); https marks the cookies Secure"},
    // Each thread's stack is committed address space; past 1024 a thread may not start.
    {.name = "drain-seconds", .target = &field<&Options::drain_seconds>, .help = "SIGTERM drains this long: /readyz answers 503 at once and answers close their connections; after all but a margin (a quarter, at most 2 s) the listener closes, streams are told to reconnect and in-flight requests get the margin; 0: stop at once, as SIGINT does", .max = 3600, .unit = "s"},
    {.name = "threads", .target = &field<&Options::threads>, .help = "I/O threads; 0 = one per core", .max = 1024},
    {.name = "data-dir", .target = &field<&Options::data_dir>, .help = "directory for the token secret, the admin key and the log"},
    {.name = "appendfsync", .target = &field<&Options::appendfsync>, .help = "always | everysec | no: when the log is synced to disk", .choices = "always|everysec|no"},
    {.name = "no-persistence", .target = &field<&Options::persistence>, .help = "keep everything in memory only", .negated = true},
    {.name = "snapshot-after", .target = &field<&Options::snapshot_after_mb>, .help = "MiB: snapshot (compact) the log once it is larger than this and twice its last compacted size; 0 = only through POST /v1/admin/snapshot"},
    {.name = "admin-key", .target = &field<&Options::admin_key>, .help = "Bearer key for the operator routes, at least 16 bytes; default: DATA_DIR/admin-key, created if absent and printed at start", .min_secret = kMinAdminKey, .secret = true},
    {.name = "token-secret", .target = &field<&Options::token_secret>, .help = "HS256 secret for admission tokens, at least 32 bytes; default: DATA_DIR/token-secret, created if absent", .min_secret = kMinTokenSecret, .secret = true},
    {.name = "token-alg", .target = &field<&Options::token_alg>, .help = "HS256 | ES256: how admission tokens are signed; ES256 publishes its public keys at /.well-known/jwks.json", .choices = "HS256|ES256"},
    {.name = "token-key", .target = &field<&Options::token_key>, .help = "ES256: PEM file of the P-256 private key; default: DATA_DIR/token-key.pem, created if absent (mode 0600)"},
    {.name = "token-key-previous", .target = &field<&Options::token_key_previous>, .help = "ES256, while rotating: PEM file of the key being replaced (private or public); its tokens still verify and it stays in the JWKS"},
    {.name = "user-secret", .target = &field<&Options::user_secret>, .help = "HS256 secret of user assertions (user_token) from the protected service; default: none accepted", .min_secret = 32, .secret = true},
    {.name = "verify-key", .target = &field<&Options::verify_key>, .help = "Bearer key good for the verify route only (for the protected service), at least 16 bytes", .min_secret = kMinAdminKey, .secret = true},
    {.name = "max-connections", .target = &field<&Options::max_connections>, .help = "open connections at most; more are answered 503 and closed", .min = 1},
    {.name = "header-limit", .target = &field<&Options::header_limit>, .help = "request header bytes at most (else 431)", .min = 1024},
    {.name = "body-limit", .target = &field<&Options::body_limit>, .help = "request body bytes at most (else 413)", .min = 1024},
    {.name = "idle-timeout", .target = &field<&Options::idle_timeout_s>, .help = "seconds a keep-alive connection may wait for its next request", .min = 1, .unit = "s"},
    {.name = "request-timeout", .target = &field<&Options::request_timeout_s>, .help = "seconds from a request's first byte to its last", .min = 1, .unit = "s"},
    {.name = "push-interval", .target = &field<&Options::push_interval_ms>, .help = "ms: at most one position update per stream in this interval", .min = 1, .unit = "ms"},
    {.name = "stream-keepalive", .target = &field<&Options::stream_keepalive_s>, .help = "seconds: an SSE stream gets its status at least this often", .min = 1, .unit = "s"},
    {.name = "stream-queue", .target = &field<&Options::stream_queue_limit>, .help = "messages queued per SSE/WebSocket stream before it is dropped as too slow", .min = 1},
    {.name = "owner-tick", .target = &field<&Options::owner_tick_ms>, .help = "ms at least between the passes that writes call for (deadlines are met on time)", .min = 1, .unit = "ms"},
    {.name = "max-connections-per-address", .target = &field<&Options::max_connections_per_address>, .help = "open connections from one client address at most; more are answered 503", .min = 1},
    {.name = "operator-reserve", .target = &field<&Options::operator_reserve>, .help = "connections under --max-connections kept for health, metrics and operator requests"},
    {.name = "max-rooms", .target = &field<&Options::max_rooms>, .help = "rooms the server holds at most (1-10000000); a PUT of one more is refused 503 unavailable", .min = 1, .max = 10'000'000},
    {.name = "max-streams-per-ticket", .target = &field<&Options::max_streams_per_ticket>, .help = "SSE and WebSocket streams watching one ticket at most; more are answered 429", .min = 1},
    {.name = "stream-heartbeat-limit", .target = &field<&Options::stream_heartbeat_limit_s>, .help = "seconds an open stream alone counts as a waiting visitor's heartbeat", .min = 1, .unit = "s"},
    {.name = "no-room-metrics", .target = &field<&Options::room_metrics>, .help = "leave per-room series (room names) out of /metrics", .negated = true},
    {.name = "metrics-key", .target = &field<&Options::metrics_key>, .help = "Bearer key good for /metrics only (Prometheus's), at least 16 bytes; /metrics also takes the admin and verify keys, and asks none on --admin-listen", .min_secret = kMinAdminKey, .secret = true},
    {.name = "metrics-public", .target = &field<&Options::metrics_public>, .help = "answer /metrics to anyone, without a key"},
    {.name = "trusted-proxy", .target = &field<&Options::trusted_proxies>, .help = "CIDR of a proxy in front (repeatable, or several comma-separated, e.g. 127.0.0.1/32,10.0.0.0/8): its connections carry many visitors, so no per-address limit applies to them"},
    {.name = "fast-pass-secret", .target = &field<&Options::fast_pass_secret>, .help = "secret shared with nginx, at least 32 bytes of A-Z a-z 0-9 _ -: after an admitted request asked the nginx way, nginx lets the visitor through without asking for --fast-pass-seconds (deploy/nginx/anteroom-fast-pass.conf); off by default", .min_secret = kMinTokenSecret, .charset = kUrlSafe, .charset_text = "A-Z a-z 0-9 _ - (nginx reads it from a quoted string)", .secret = true},
    {.name = "fast-pass-seconds", .target = &field<&Options::fast_pass_seconds>, .help = "seconds a fast pass lasts: a ticket that ends still passes nginx this long", .min = 1, .max = 60, .unit = "s"},
    {.name = "allow-origin", .target = &field<&Options::allow_origins>, .help = "ORIGIN (repeatable, e.g. https://shop.example.com) of another site whose pages may join and leave here; other sites' browser requests that change state are refused 403 cross_site"},
    {.name = "cluster", .target = &field<&Options::cluster>, .help = "the Redis that a cluster of nodes shares: redis://[[USER]:PASSWORD@]HOST:PORT, rediss://... (TLS), redis-sentinel://HOST:PORT,.../MASTER or HOST:PORT, or a comma-separated list of a Redis Cluster's nodes (docs/cluster.md); every node needs the same --token-secret; the log is off", .secret = true},
    {.name = "redis-password", .target = &field<&Options::redis_password>, .help = "the password of --cluster's Redis when its URL holds none; better given as ANTEROOM_REDIS_PASSWORD than on a command line others can read", .secret = true},
    {.name = "redis-tls-ca", .target = &field<&Options::redis_tls_ca>, .help = "rediss://: FILE of PEM CA certificates that Redis's certificate must chain to; default: the system's"},
    {.name = "redis-tls-cert", .target = &field<&Options::redis_tls_cert>, .help = "rediss://: FILE of this node's PEM client certificate (with --redis-tls-key), for a Redis that asks for one"},
    {.name = "redis-tls-key", .target = &field<&Options::redis_tls_key>, .help = "rediss://: FILE of the PEM private key of --redis-tls-cert"},
    {.name = "node-name", .target = &field<&Options::node_name>, .help = "this node's name in the cluster; default: host name and process id"},
    {.name = "redis-wait", .target = &field<&Options::redis_wait>, .help = "cluster: a write is answered once this many Redis replicas have it (WAIT)"},
    {.name = "demo-room", .target = &field<&Options::demo_room>, .help = "create a room with this name at start"},
    {.name = "room-capacity", .target = &room<&RoomConfig::capacity>, .help = "default capacity (ALLOWED + ACTIVE at once); 0 = no limit", .room_field = "capacity"},
    {.name = "room-admission", .target = &room<&RoomConfig::admission>, .help = "default admission: auto | manual", .choices = "auto|manual", .room_field = "admission"},
    {.name = "room-admit-per-second", .target = &room<&RoomConfig::admit_per_second>, .help = "default cap on auto admissions per second; 0 = none", .room_field = "admit_per_second"},
    {.name = "room-allowed-ttl", .target = &room<&RoomConfig::allowed_ttl_seconds>, .help = "default seconds an admission may go unused", .room_field = "allowed_ttl_seconds"},
    {.name = "room-session-ttl", .target = &room<&RoomConfig::session_ttl_seconds>, .help = "default seconds an active session may idle", .room_field = "session_ttl_seconds"},
    {.name = "room-heartbeat-timeout", .target = &room<&RoomConfig::heartbeat_timeout_seconds>, .help = "default seconds a waiting visitor may go unseen", .room_field = "heartbeat_timeout_seconds"},
    {.name = "room-max-waiting", .target = &room<&RoomConfig::max_waiting>, .help = "default longest line; 0 = no limit", .room_field = "max_waiting"},

};
// clang-format on

}  // namespace

std::span<const FlagRow> flag_rows() { return kRows; }

const FlagRow* find_flag(std::string_view name) {
  const auto* it = std::find_if(std::begin(kRows), std::end(kRows),
                                [&](const FlagRow& row) { return name == row.name; });
  return it == std::end(kRows) ? nullptr : it;
}

const char* admission_name(AdmissionMode mode) {
  return mode == AdmissionMode::kManual ? "manual" : "auto";
}

std::string said_choices(std::string_view choices) {
  std::string out;
  for (size_t at = 0; at <= choices.size();) {
    size_t bar = choices.find('|', at);
    if (bar == std::string_view::npos) bar = choices.size();
    if (!out.empty()) out += bar == choices.size() ? " or " : ", ";
    out += choices.substr(at, bar - at);
    at = bar + 1;
  }
  return out;
}

bool is_choice(std::string_view choices, std::string_view value) {
  for (size_t at = 0; at <= choices.size();) {
    size_t bar = choices.find('|', at);
    if (bar == std::string_view::npos) bar = choices.size();
    if (choices.substr(at, bar - at) == value) return true;
    at = bar + 1;
  }
  return false;
}

std::string variable_of(const FlagRow& row) {
  const std::string_view name = row.name;
  if (name == "help") return "";
  std::string v = "ANTEROOM_";
  for (char c : name) {
    v += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return v;
}

}  // namespace anteroom
