// Everything anteroom can be told at start. Each field is one command-line flag (the name
// in the comment), whose row in flag_rows.cc gives its help, its bounds and the ANTEROOM_*
// variable it is also read from; its initializer here is its default.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/model.h"
#include "engine/status.h"

namespace anteroom {

// A room declared in the --config file (`[room NAME]`): put at every start like a
// PUT /v1/rooms/NAME with these settings (docs/server.md "Config file").
struct DeclaredRoom {
  std::string name;
  std::string where;     // "FILE:LINE: " of its [room NAME] line, for messages
  std::string settings;  // the settings as a PUT body (a JSON object), already checked
};

struct Options {
  // --config FILE: every flag as `name = value`; flags and ANTEROOM_* variables win over it.
  std::string config;
  std::vector<DeclaredRoom> rooms;  // the file's [room NAME] sections
  // --access-log PATH|-: one JSON line per request (docs/server.md "Access log"); "-" is
  // standard output; empty: off.
  std::string access_log;

  std::string listen = "127.0.0.1:8080";  // --listen HOST:PORT (port 0: any free port)
  // --admin-listen HOST:PORT: the operator routes (docs/api.md) are served here only, and
  // the --listen address answers them 404; empty: every route on --listen.
  std::string admin_listen;
  // --public-url: where visitors reach anteroom (https://queue.example.com); an https URL
  // marks the cookies Secure.
  std::string public_url;
  unsigned threads = 0;                  // --threads; 0 = one per core
  unsigned drain_seconds = 10;           // --drain-seconds: SIGTERM's drain (main.cc)
  std::string data_dir = "./data";       // --data-dir: secrets (and, later, the log)
  std::string appendfsync = "everysec";  // --appendfsync always|everysec|no
  bool persistence = true;               // --no-persistence turns it off
  unsigned snapshot_after_mb = 64;       // --snapshot-after: compact the log past this size
  std::string admin_key;                 // --admin-key; empty: read or create DATA_DIR/admin-key
  std::string token_secret;  // --token-secret; empty: read or create DATA_DIR/token-secret
  // --token-alg HS256|ES256: how admission tokens are signed. ES256 signs with a P-256 key:
  // --token-key FILE (PEM), else DATA_DIR/token-key.pem, created once; its public half is
  // served at /.well-known/jwks.json, with --token-key-previous FILE's while rotating.
  std::string token_alg = "HS256";
  std::string token_key;
  std::string token_key_previous;
  // --user-secret: HS256 secret of the protected service's user assertions (user_token);
  // empty: none are accepted.
  std::string user_secret;
  // --verify-key: a Bearer key good for POST /v1/rooms/{room}/verify only, so the protected
  // service never holds the admin key; empty: verify takes the admin key alone.
  std::string verify_key;

  unsigned max_connections = 19'000;  // --max-connections; beyond it: 503 and close
  unsigned header_limit = 8 * 1024;   // --header-limit bytes; larger: 431
  unsigned body_limit = 16 * 1024;    // --body-limit bytes; larger: 413
  unsigned idle_timeout_s = 60;       // --idle-timeout: keep-alive connection with no request
  unsigned request_timeout_s = 10;    // --request-timeout: from first byte to whole request
  unsigned push_interval_ms = 1000;   // --push-interval: at most one position push per stream
  unsigned stream_keepalive_s = 15;   // --stream-keepalive: SSE status at least this often
  unsigned stream_queue_limit = 64;   // --stream-queue: messages queued per stream, then drop
  unsigned owner_tick_ms = 5;         // --owner-tick: least ms between passes writes call for
  // --max-connections-per-address: open connections from one client address; beyond: 503.
  unsigned max_connections_per_address = 1'000;
  // --operator-reserve: the last connections under --max-connections serve only health,
  // readiness, metrics and operator requests, so one flood cannot lock operators out.
  unsigned operator_reserve = 64;
  size_t max_rooms = 10'000;            // --max-rooms: rooms the engine holds at most
  unsigned max_streams_per_ticket = 4;  // --max-streams-per-ticket: SSE/WebSocket; beyond: 429
  // --stream-heartbeat-limit: seconds an open stream alone keeps a WAITING ticket alive; the
  // waiting page reopens its stream well within this, a tab left behind does not.
  unsigned stream_heartbeat_limit_s = 1800;
  bool room_metrics = true;  // --no-room-metrics: /metrics without per-room series (names)
  // --metrics-key: a Bearer key good for /metrics only (Prometheus's), besides the admin and
  // verify keys; --metrics-public opens /metrics to anyone. On --admin-listen no key is asked.
  std::string metrics_key;
  bool metrics_public = false;
  // --trusted-proxy CIDR (repeatable): peers in these networks are proxies carrying many
  // visitors (nginx in front): no per-address connection limit for them.
  std::vector<std::string> trusted_proxies;
  // --fast-pass-secret: shared with nginx (deploy/nginx/anteroom-fast-pass.conf), so that for
  // --fast-pass-seconds after an admitted request nginx lets the visitor's next ones through
  // without asking the gate (server/app/fast_pass.h); empty: off.
  std::string fast_pass_secret;
  unsigned fast_pass_seconds = 2;
  // --allow-origin ORIGIN (repeatable): pages of these other sites may write (join, leave)
  // here; any other site's browser requests that would change state are refused 403.
  std::vector<std::string> allow_origins;

  // --cluster HOST:PORT: a cluster node whose rooms live in this Redis (docs/cluster.md);
  // empty: one process with its own log.
  std::string cluster;
  // The password of --cluster's Redis when the URL holds none (ANTEROOM_REDIS_PASSWORD), and
  // the TLS files of a rediss:// one.
  std::string redis_password;
  std::string redis_tls_ca;
  std::string redis_tls_cert;
  std::string redis_tls_key;
  std::string node_name;    // --node-name: unique in the cluster; default host name and pid
  unsigned redis_wait = 0;  // --redis-wait N: a write counts once N Redis replicas have it

  std::string demo_room;  // --demo-room NAME: create this room at start if it does not exist
  RoomConfig room;        // --room-capacity, --room-admission, --room-admit-per-second,
                          // --room-allowed-ttl, --room-session-ttl,
                          // --room-heartbeat-timeout, --room-max-waiting: the defaults for
                          // fields a PUT /v1/rooms/{room} leaves out

  std::string host() const;
  uint16_t port() const;
  std::string admin_host() const;  // of admin_listen
  uint16_t admin_port() const;
};

// Parses argv (and the environment). Sets *exit_now with the text to print for --help or
// --version; returns kInvalidArgument with a message for bad flags.
Result<Options> parse_options(int argc, char** argv, std::string* exit_now);

}  // namespace anteroom
