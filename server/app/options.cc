#include "server/app/options.h"

#include <arpa/inet.h>

#include "server/app/config_options.h"
#include "server/app/cross_site.h"
#include "server/app/redis_url.h"
#include "server/app/secrets.h"

#include <boost/program_options.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

namespace anteroom {
namespace po = boost::program_options;

namespace {

// HOST of HOST:PORT, without the brackets of an [IPv6] host.
std::string host_of(const std::string& endpoint) {
  std::string h = endpoint.substr(0, endpoint.rfind(':'));
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  return h;
}

}  // namespace

std::string Options::host() const { return host_of(listen); }
std::string Options::admin_host() const { return host_of(admin_listen); }
uint16_t Options::admin_port() const {
  return static_cast<uint16_t>(std::stoul(admin_listen.substr(admin_listen.rfind(':') + 1)));
}

uint16_t Options::port() const {
  return static_cast<uint16_t>(std::stoul(listen.substr(listen.rfind(':') + 1)));
}

namespace {

// "1.2.3.4", "1.2.3.0/24", "::1", "fd00::/8".
bool valid_cidr(const std::string& cidr) {
  const size_t slash = cidr.find('/');
  const std::string address = cidr.substr(0, slash);
  const bool v6 = address.find(':') != std::string::npos;
  unsigned char buf[16];
  if (inet_pton(v6 ? AF_INET6 : AF_INET, address.c_str(), buf) != 1) return false;
  if (slash == std::string::npos) return true;
  const std::string bits = cidr.substr(slash + 1);
  if (bits.empty() || bits.size() > 3 || bits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  return std::stoi(bits) <= (v6 ? 128 : 32);
}

// HOST:PORT with a port of 0-65535; else why not, naming `flag`.
std::string check_endpoint(const char* flag, const std::string& value) {
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == value.size()) {
    return std::string(flag) + " must be HOST:PORT, e.g. 127.0.0.1:8080";
  }
  const std::string port = value.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoul(port) > 65535) {
    return std::string(flag) + " port must be 0-65535";
  }
  return "";
}

// A room default's check ("admit_per_second applies to ...") told with its flag's name.
std::string room_flag_message(const std::string& message) {
  static const std::pair<const char*, const char*> kFlags[] = {
      {"capacity", "--room-capacity"},
      {"admit_per_second", "--room-admit-per-second"},
      {"allowed_ttl_seconds", "--room-allowed-ttl"},
      {"session_ttl_seconds", "--room-session-ttl"},
      {"heartbeat_timeout_seconds", "--room-heartbeat-timeout"},
      {"max_waiting", "--room-max-waiting"}};
  const std::string field = message.substr(0, message.find(' '));
  for (const auto& [name, flag] : kFlags) {
    if (field == name) return flag + message.substr(field.size());
  }
  return "--room-" + message;
}

// The first --allow-origin that is not an origin, and why; empty if all are.
std::string check_origins(const std::vector<std::string>& origins) {
  for (const std::string& origin : origins) {
    if (std::string why = check_origin(origin); !why.empty()) {
      std::string m = "--allow-origin '";
      m += origin;
      m += "' ";
      m += why;
      return m;
    }
  }
  return "";
}

Status check(const Options& o) {
  auto bad = [](const std::string& m) { return Status(Code::kInvalidArgument, m); };
  if (std::string why = check_endpoint("--listen", o.listen); !why.empty()) return bad(why);
  if (!o.admin_listen.empty()) {
    if (std::string why = check_endpoint("--admin-listen", o.admin_listen); !why.empty())
      return bad(why);
    // The same address twice cannot both bind, unless the port is 0 (each gets its own).
    if (o.admin_listen == o.listen && o.port() != 0) {
      return bad("--admin-listen must differ from --listen");
    }
  }
  if (!o.public_url.empty() && !o.public_url.starts_with("https://") &&
      !o.public_url.starts_with("http://")) {
    return bad("--public-url must start with https:// or http://");
  }
  if (o.appendfsync != "always" && o.appendfsync != "everysec" && o.appendfsync != "no") {
    return bad("--appendfsync must be always, everysec or no");
  }
  // Each thread's stack is committed address space; past this a thread cannot start.
  if (o.threads > 1024) return bad("--threads must be at most 1024");
  if (o.max_connections == 0) return bad("--max-connections must be at least 1");
  if (o.header_limit < 1024) return bad("--header-limit must be at least 1024");
  if (o.idle_timeout_s == 0) return bad("--idle-timeout must be >= 1 s");
  if (o.request_timeout_s == 0) return bad("--request-timeout must be >= 1 s");
  if (o.push_interval_ms == 0) return bad("--push-interval must be >= 1 ms");
  if (o.owner_tick_ms == 0) return bad("--owner-tick must be >= 1 ms");
  if (o.stream_keepalive_s == 0) return bad("--stream-keepalive must be >= 1 s");
  if (o.stream_queue_limit == 0) return bad("--stream-queue must be >= 1");
  if (o.max_connections_per_address == 0) return bad("--max-connections-per-address must be >= 1");
  if (o.operator_reserve >= o.max_connections)
    return bad("--operator-reserve must be smaller than --max-connections");
  if (o.max_streams_per_ticket == 0) return bad("--max-streams-per-ticket must be >= 1");
  if (o.max_rooms == 0 || o.max_rooms > 10'000'000) return bad("--max-rooms must be 1-10000000");
  if (o.stream_heartbeat_limit_s == 0) return bad("--stream-heartbeat-limit must be >= 1 s");
  if (o.token_alg != "HS256" && o.token_alg != "ES256") {
    return bad("--token-alg must be HS256 or ES256, not '" + o.token_alg + "'");
  }
  if (o.token_alg != "ES256" && (!o.token_key.empty() || !o.token_key_previous.empty())) {
    return bad("--token-key and --token-key-previous need --token-alg ES256");
  }
  // Given secrets are checked here too (load_secrets checks those read from the data dir),
  // so that one set in a --config file is refused at its line.
  const std::pair<const char*, const std::string*> given[] = {{"--admin-key", &o.admin_key},
                                                              {"--verify-key", &o.verify_key},
                                                              {"--metrics-key", &o.metrics_key}};
  for (const auto& [flag, key] : given) {
    if (key->empty()) continue;
    if (std::string why = weak_secret(flag, *key, kMinAdminKey); !why.empty()) return bad(why);
  }
  if (!o.token_secret.empty()) {
    if (std::string why = weak_secret("--token-secret", o.token_secret, kMinTokenSecret);
        !why.empty())
      return bad(why);
  }
  if (std::string why = check_origins(o.allow_origins); !why.empty()) return bad(why);
  for (const std::string& cidr : o.trusted_proxies) {
    if (!valid_cidr(cidr)) return bad("--trusted-proxy '" + cidr + "' is not an address or a CIDR");
  }
  if (!o.user_secret.empty()) {
    if (std::string why = weak_secret("--user-secret", o.user_secret, 32); !why.empty())
      return bad(why);
  }
  if (!o.cluster.empty()) {
    auto target = parse_redis_target(o.cluster);
    if (!target.is_ok()) return target.status();
    if (target->scheme != RedisTarget::Scheme::kPlain || !target->password.empty() ||
        target->db != 0) {
      return bad(
          "--cluster: this build speaks plain TCP to Redis without AUTH, database 0: "
          "redis://HOST:PORT or HOST:PORT");
    }
  }
  if (!o.demo_room.empty() && !valid_room_name(o.demo_room)) {
    return bad("--demo-room: room names are 1-64 characters of A-Z a-z 0-9 _ -");
  }
  if (Status st = o.room.validate(); !st.is_ok()) return bad(room_flag_message(st.message()));
  return Status::ok();
}

}  // namespace

namespace {

// The flags also read from ANTEROOM_* variables.
std::string flag_of_variable(const std::string& env) {
  if (env == "ANTEROOM_LISTEN") return "listen";
  if (env == "ANTEROOM_DATA_DIR") return "data-dir";
  if (env == "ANTEROOM_APPENDFSYNC") return "appendfsync";
  if (env == "ANTEROOM_ADMIN_KEY") return "admin-key";
  if (env == "ANTEROOM_TOKEN_SECRET") return "token-secret";
  if (env == "ANTEROOM_THREADS") return "threads";
  if (env == "ANTEROOM_CLUSTER") return "cluster";
  if (env == "ANTEROOM_METRICS_KEY") return "metrics-key";
  return "";
}

// Boost's what() fills the %placeholders% of its message with the flag and the value as
// typed, and loops for ever, growing the message, when what it fills in holds a placeholder
// itself (`--x%canonical_option%`; found by fuzz/options_fuzz.cc). Where a flag or an
// ANTEROOM_* variable holds a '%', the error is told without what(). What it fills in may
// also be a credential (`--admin-ky=SECRET`, a misspelling; a bad --cluster URL with its
// password), and errors end up in logs: an unknown flag is named without its value, and a
// credential's value is never shown (value_may_be_shown, config_options.h).
std::string describe(const po::error_with_option_name& e, const po::options_description& d,
                     int argc, char** argv) {
  std::string name = e.get_option_name();
  name = name.substr(0, name.find('='));
  if (dynamic_cast<const po::unknown_option*>(&e) != nullptr) {
    return "unrecognised option '" + name + "'";
  }
  const size_t dashes = name.find_first_not_of('-');
  const std::string flag = dashes == std::string::npos ? name : name.substr(dashes);
  if (dynamic_cast<const po::invalid_option_value*>(&e) != nullptr &&
      !value_may_be_shown(flag, d)) {
    return "the value given for " + name + " is not valid";
  }
  bool percent = false;
  for (int i = 1; i < argc; ++i) percent = percent || std::strchr(argv[i], '%') != nullptr;
  for (char** v = environ; v != nullptr && *v != nullptr; ++v) {
    percent = percent || (std::strncmp(*v, "ANTEROOM_", 9) == 0 && std::strchr(*v, '%') != nullptr);
  }
  if (!percent) return e.what();
  return "the flag " + name + " or its value is not valid";
}

// The cluster's flags and the room defaults (--room-*): the second half of --help.
void add_cluster_and_room_flags(po::options_description& d, Options& o, std::string& admission) {
  // clang-format off
  d.add_options()
    ("cluster", po::value(&o.cluster), "the Redis that a cluster of nodes shares: redis://HOST:PORT or HOST:PORT, or a comma-separated list of a Redis Cluster's nodes (docs/cluster.md); every node needs the same --token-secret; the log is off")
    ("node-name", po::value(&o.node_name), "this node's name in the cluster; default: host name and process id")
    ("redis-wait", po::value(&o.redis_wait)->default_value(o.redis_wait), "cluster: a write is answered once this many Redis replicas have it (WAIT)")
    ("demo-room", po::value(&o.demo_room), "create a room with this name at start")
    ("room-capacity", po::value(&o.room.capacity)->default_value(o.room.capacity), "default capacity (ALLOWED + ACTIVE at once); 0 = no limit")
    ("room-admission", po::value(&admission)->default_value(admission), "default admission: auto | manual")
    ("room-admit-per-second", po::value(&o.room.admit_per_second)->default_value(o.room.admit_per_second), "default cap on auto admissions per second; 0 = none")
    ("room-allowed-ttl", po::value(&o.room.allowed_ttl_seconds)->default_value(o.room.allowed_ttl_seconds), "default seconds an admission may go unused")
    ("room-session-ttl", po::value(&o.room.session_ttl_seconds)->default_value(o.room.session_ttl_seconds), "default seconds an active session may idle")
    ("room-heartbeat-timeout", po::value(&o.room.heartbeat_timeout_seconds)->default_value(o.room.heartbeat_timeout_seconds), "default seconds a waiting visitor may go unseen")
    ("room-max-waiting", po::value(&o.room.max_waiting)->default_value(o.room.max_waiting), "default longest line; 0 = no limit");
  // clang-format on
}

Status admission_of(const std::string& admission, RoomConfig* room) {
  if (admission == "auto") {
    room->admission = AdmissionMode::kAuto;
  } else if (admission == "manual") {
    room->admission = AdmissionMode::kManual;
  } else {
    return Status(Code::kInvalidArgument, "--room-admission must be auto or manual");
  }
  return Status::ok();
}

// The switches, read as booleans (`no-persistence = true` in a config file).
struct Switches {
  bool persistence = false;   // --no-persistence
  bool room_metrics = false;  // --no-room-metrics
};

// Every flag but the cluster's and the room defaults: the first half of --help.
void add_server_flags(po::options_description& d, Options& o, Switches& off) {
  // clang-format off
  d.add_options()
    ("help,h", "print this and exit")
    ("config", po::value(&o.config), "FILE of `name = value` lines, one for any flag here, and [room NAME] sections (docs/server.md); flags and ANTEROOM_* variables win over it")
    ("access-log", po::value(&o.access_log), "PATH, or - for standard output: one JSON line per request (docs/server.md), PATH reopened on SIGHUP; off by default")
    ("listen", po::value(&o.listen)->default_value(o.listen), "HOST:PORT to listen on; port 0 picks a free port and prints it")
    ("admin-listen", po::value(&o.admin_listen), "HOST:PORT of a listener of its own for the operator routes (rooms, admit, clear, events and pages written, snapshot, cluster, metrics); --listen then answers them 404")
    ("public-url", po::value(&o.public_url), "the URL visitors reach anteroom at (https://queue.example.com); https marks the cookies Secure")
    ("threads", po::value(&o.threads)->default_value(o.threads), "I/O threads; 0 = one per core")
    ("data-dir", po::value(&o.data_dir)->default_value(o.data_dir), "directory for the token secret, the admin key and the log")
    ("appendfsync", po::value(&o.appendfsync)->default_value(o.appendfsync), "always | everysec | no: when the log is synced to disk")
    ("no-persistence", po::bool_switch(&off.persistence), "keep everything in memory only")
    ("snapshot-after", po::value(&o.snapshot_after_mb)->default_value(o.snapshot_after_mb), "MiB: snapshot (compact) the log once it is larger than this and twice its last compacted size; 0 = only through POST /v1/admin/snapshot")
    ("admin-key", po::value(&o.admin_key), "Bearer key for the operator routes, at least 16 bytes; default: DATA_DIR/admin-key, created if absent and printed at start")
    ("token-secret", po::value(&o.token_secret), "HS256 secret for admission tokens, at least 32 bytes; default: DATA_DIR/token-secret, created if absent")
    ("token-alg", po::value(&o.token_alg)->default_value(o.token_alg), "HS256 | ES256: how admission tokens are signed; ES256 publishes its public keys at /.well-known/jwks.json")
    ("token-key", po::value(&o.token_key), "ES256: PEM file of the P-256 private key; default: DATA_DIR/token-key.pem, created if absent (mode 0600)")
    ("token-key-previous", po::value(&o.token_key_previous), "ES256, while rotating: PEM file of the key being replaced (private or public); its tokens still verify and it stays in the JWKS")
    ("user-secret", po::value(&o.user_secret), "HS256 secret of user assertions (user_token) from the protected service; default: none accepted")
    ("verify-key", po::value(&o.verify_key), "Bearer key good for the verify route only (for the protected service), at least 16 bytes")
    ("max-connections", po::value(&o.max_connections)->default_value(o.max_connections), "open connections at most; more are answered 503 and closed")
    ("header-limit", po::value(&o.header_limit)->default_value(o.header_limit), "request header bytes at most (else 431)")
    ("body-limit", po::value(&o.body_limit)->default_value(o.body_limit), "request body bytes at most (else 413)")
    ("idle-timeout", po::value(&o.idle_timeout_s)->default_value(o.idle_timeout_s), "seconds a keep-alive connection may wait for its next request")
    ("request-timeout", po::value(&o.request_timeout_s)->default_value(o.request_timeout_s), "seconds from a request's first byte to its last")
    ("push-interval", po::value(&o.push_interval_ms)->default_value(o.push_interval_ms), "ms: at most one position update per stream in this interval")
    ("stream-keepalive", po::value(&o.stream_keepalive_s)->default_value(o.stream_keepalive_s), "seconds: an SSE stream gets its status at least this often")
    ("stream-queue", po::value(&o.stream_queue_limit)->default_value(o.stream_queue_limit), "messages queued per SSE/WebSocket stream before it is dropped as too slow")
    ("owner-tick", po::value(&o.owner_tick_ms)->default_value(o.owner_tick_ms), "ms at least between the passes that writes call for (deadlines are met on time)")
    ("max-connections-per-address", po::value(&o.max_connections_per_address)->default_value(o.max_connections_per_address), "open connections from one client address at most; more are answered 503")
    ("operator-reserve", po::value(&o.operator_reserve)->default_value(o.operator_reserve), "connections under --max-connections kept for health, metrics and operator requests")
    ("max-rooms", po::value(&o.max_rooms)->default_value(o.max_rooms), "rooms the server holds at most (1-10000000); a PUT of one more is refused 503 unavailable")
    ("max-streams-per-ticket", po::value(&o.max_streams_per_ticket)->default_value(o.max_streams_per_ticket), "SSE and WebSocket streams watching one ticket at most; more are answered 429")
    ("stream-heartbeat-limit", po::value(&o.stream_heartbeat_limit_s)->default_value(o.stream_heartbeat_limit_s), "seconds an open stream alone counts as a waiting visitor's heartbeat")
    ("no-room-metrics", po::bool_switch(&off.room_metrics), "leave per-room series (room names) out of /metrics")
    ("metrics-key", po::value(&o.metrics_key), "Bearer key good for /metrics only (Prometheus's), at least 16 bytes; /metrics also takes the admin and verify keys, and asks none on --admin-listen")
    ("metrics-public", po::bool_switch(&o.metrics_public), "answer /metrics to anyone, without a key")
    ("trusted-proxy", po::value(&o.trusted_proxies)->composing(), "CIDR of a proxy in front (repeatable, e.g. 127.0.0.1/32): its connections carry many visitors, so no per-address limit applies to them")
    ("allow-origin", po::value(&o.allow_origins)->composing(), "ORIGIN (repeatable, e.g. https://shop.example.com) of another site whose pages may join and leave here; other sites' browser requests that change state are refused 403 cross_site");
  // clang-format on
}

}  // namespace

namespace {

// A flag taking an unsigned number given a negative one, on the command line or in the
// environment, is refused as the file refuses it (store_config_flags). A variable the
// command line overrides is not looked at, as Boost does not read it either.
Status refuse_negative(const po::parsed_options& given, const po::options_description& d,
                       const po::variables_map& before, bool environment) {
  for (const po::option& opt : given.options) {
    const po::option_description* option = d.find_nothrow(opt.string_key, false);
    if (option == nullptr) continue;
    if (auto it = before.find(opt.string_key);
        environment && it != before.end() && !it->second.defaulted()) {
      continue;
    }
    std::string source = "option '--" + opt.string_key + "'";
    if (environment) {
      std::string var = "ANTEROOM_" + opt.string_key;
      for (char& c : var) c = c == '-' ? '_' : static_cast<char>(std::toupper(c));
      source = var + " (--" + opt.string_key + ")";
    }
    for (const std::string& value : opt.value) {
      if (negative_for_unsigned(*option, value)) {
        std::string why = "the argument ('";
        why += value;
        why += "') for ";
        why += source;
        why += " is invalid";
        return Status(Code::kInvalidArgument, why);
      }
    }
  }
  return Status::ok();
}

}  // namespace

Result<Options> parse_options(int argc, char** argv, std::string* exit_now) {
  Options o;
  Switches off;
  std::string admission = "auto";
  po::options_description d(
      "anteroom: a virtual waiting room\n\n"
      "usage: anteroom [flags]\n\n"
      "Flags (eight also from ANTEROOM_LISTEN, ANTEROOM_DATA_DIR, ANTEROOM_APPENDFSYNC,\n"
      "ANTEROOM_ADMIN_KEY, ANTEROOM_TOKEN_SECRET, ANTEROOM_THREADS, ANTEROOM_CLUSTER,\n"
      "ANTEROOM_METRICS_KEY; any but\n"
      "--help and --config also as `name = value` in the --config file, which both win over)");
  add_server_flags(d, o, off);
  add_cluster_and_room_flags(d, o, admission);
  po::variables_map vm;
  std::optional<ConfigFile> file;
  FileFlags from_file;  // the flags the file set, and where
  try {
    const po::parsed_options command_line = po::parse_command_line(argc, argv, d);
    if (Status st = refuse_negative(command_line, d, vm, false); !st.is_ok()) return st;
    po::store(command_line, vm);
    const po::parsed_options environment = po::parse_environment(d, flag_of_variable);
    if (Status st = refuse_negative(environment, d, vm, true); !st.is_ok()) return st;
    po::store(environment, vm);
    if (vm.count("help") == 0 && vm.count("config") != 0) {
      auto read = read_config_file(vm["config"].as<std::string>());
      if (!read.is_ok()) return read.status();
      file = std::move(read).value();
      if (Status st = store_config_flags(*file, d, &vm, &from_file); !st.is_ok()) return st;
    }
    po::notify(vm);
  } catch (const po::error_with_option_name& e) {
    return Status(Code::kInvalidArgument, describe(e, d, argc, argv));
  } catch (const po::error& e) {
    return Status(Code::kInvalidArgument, e.what());
  }
  if (vm.count("help") != 0) {
    std::ostringstream s;
    s << d;
    *exit_now = s.str();
    return o;
  }
  o.persistence = !off.persistence;
  o.room_metrics = !off.room_metrics;
  Status st = admission_of(admission, &o.room);
  if (st.is_ok()) st = check(o);
  if (!st.is_ok()) return file ? attribute(st, *file, from_file) : st;
  if (file) {
    if (Status rooms = declare_rooms(*file, &o); !rooms.is_ok()) return rooms;
  }
  return o;
}

}  // namespace anteroom
