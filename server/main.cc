// anteroom: parse flags, load secrets, start the server, stop gracefully on SIGINT/SIGTERM,
// reopen the access log on SIGHUP.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <initializer_list>
#include <optional>
#include <thread>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

#include "cluster/cluster_engine.h"
#include "engine/hex.h"
#include "server/app/options.h"
#include "server/app/redis_url.h"
#include "server/app/secrets.h"
#include "server/app/token.h"
#include "server/transport/health_probe.h"
#include "server/transport/server.h"
#include "storage/check_log.h"
#include "storage/persistent_engine.h"

namespace {

// HMAC-SHA256 of `label` under the token secret: what every node of a cluster derives the
// same from the same secret (the ticket id key, the secret check in Redis) without the
// secret itself ever leaving the node.
std::array<unsigned char, 32> derive(const std::string& secret, const char* label) {
  std::array<unsigned char, 32> out{};
  unsigned len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(label), std::strlen(label), out.data(), &len);
  return out;
}

// `tokens`: with ES256 its key is part of what the nodes must share, so a node with another
// key refuses to start like one with another secret.
anteroom::Result<std::unique_ptr<anteroom::Engine>> open_cluster_node(
    const anteroom::Options& o, const std::string& secret, const anteroom::TokenSigner& tokens) {
  anteroom::cluster::ClusterOptions c;
  const auto target = anteroom::parse_redis_target(o.cluster).value();  // parse_options checked it
  const auto& redis = target.hosts;
  auto access = anteroom::cluster::RedisAccess::make(
      target.user, target.password.empty() ? o.redis_password : target.password,
      target.scheme == anteroom::RedisTarget::Scheme::kTls ||
          (target.scheme == anteroom::RedisTarget::Scheme::kSentinel && !o.redis_tls_ca.empty()),
      {o.redis_tls_ca, o.redis_tls_cert, o.redis_tls_key});
  if (!access.is_ok()) return access.status();
  c.access = std::move(access.value());
  c.sentinel_master = target.master;  // empty unless redis-sentinel://
  c.redis_host = redis.front().first;
  c.redis_port = redis.front().second;
  c.more_redis.assign(redis.begin() + 1, redis.end());
  c.node_name = o.node_name;
  c.redis_wait = o.redis_wait;
  // HS256: the label alone (as before ES256 existed, so running clusters keep their check).
  const std::string check_label = tokens.alg() == anteroom::TokenAlg::kES256
                                      ? "anteroom secret check, ES256 key " + tokens.kid()
                                      : std::string("anteroom secret check");
  const auto check = derive(secret, check_label.c_str());
  c.secret_check = anteroom::to_hex(check.data(), check.size());
  anteroom::EngineOptions e;
  e.clock = std::make_shared<anteroom::WallClock>();  // records carry wall-clock times
  const auto ids = derive(secret, "anteroom ticket ids");
  std::array<uint64_t, 2> key{};
  std::memcpy(key.data(), ids.data(), sizeof key);
  e.id_key = key;
  e.secret = derive(secret, "anteroom engine secret");
  e.max_rooms = o.max_rooms;
  auto node = anteroom::cluster::open_cluster_engine(c, e);
  if (!node.is_ok()) return node.status();
  return std::unique_ptr<anteroom::Engine>(std::move(node.value()));
}

// Descriptors the process needs besides connections: the log and its snapshot, standard
// streams, the listener (64), and the epoll and event descriptors of each I/O thread (3
// each; 4 counted).
rlim_t reserved_descriptors(const anteroom::Options& o) {
  const unsigned threads =
      o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  return 64 + 4 * rlim_t{threads};
}

// Raises the soft descriptor limit to the hard one and keeps --max-connections under it
// with a reserve, so running out of descriptors cannot stop the server from answering
// 503 or reading its own files.
void fit_connections_to_descriptors(anteroom::Options* o) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
    getrlimit(RLIMIT_NOFILE, &lim);
  }
  const rlim_t reserved = reserved_descriptors(*o);
  const rlim_t usable = lim.rlim_cur > 2 * reserved ? lim.rlim_cur - reserved : lim.rlim_cur / 2;
  if (o->max_connections <= usable) return;
  std::fprintf(stderr,
               "anteroom: warning: --max-connections %u is more than %llu descriptors allow; "
               "using %llu\n",
               o->max_connections, static_cast<unsigned long long>(lim.rlim_cur),
               static_cast<unsigned long long>(usable));
  o->max_connections = static_cast<unsigned>(usable);
  o->operator_reserve = std::min(o->operator_reserve, o->max_connections / 4);
}

// The signer of admission tokens --token-alg asks for; says so when it created a key, and
// why there is none.
std::optional<anteroom::TokenSigner> token_signer(const anteroom::Options& o,
                                                  const std::string& secret) {
  bool created = false;
  auto tokens = anteroom::load_token_signer(o.token_alg, o.data_dir, o.token_key,
                                            o.token_key_previous, secret, &created);
  if (!tokens.is_ok()) {
    std::fprintf(stderr, "anteroom: %s\n", tokens.status().message().c_str());
    return std::nullopt;
  }
  if (created) {
    std::fprintf(stderr, "anteroom: created the ES256 token key %s/token-key.pem (kid %s)\n",
                 o.data_dir.c_str(), tokens->kid().c_str());
  }
  return std::move(tokens).value();
}

// Started with standard input, output or error closed, the first file opened (the log)
// would get that number, and whatever is printed would land in it: /dev/null takes them.
bool standard_files_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF && ::open("/dev/null", O_RDWR) != fd) {
      return false;
    }
  }
  return true;
}

// Adds `more` to *signals and blocks them all in this thread (and the threads it starts).
void block(sigset_t* signals, std::initializer_list<int> more) {
  for (int sig : more) sigaddset(signals, sig);
  pthread_sigmask(SIG_BLOCK, signals, nullptr);
}

// Takes the blocked `signals` until SIGINT or SIGTERM comes, or (`until` set) that time
// passes; SIGHUP has the access log reopened meanwhile (never stops the server). Returns the
// signal, or 0 when the time passed.
int wait_for_stop_signal(const sigset_t& signals, anteroom::Server& server,
                         std::optional<std::chrono::steady_clock::time_point> until = {}) {
  for (;;) {
    int sig = 0;
    if (until) {
      const auto left =
          std::max(std::chrono::nanoseconds(0), *until - std::chrono::steady_clock::now());
      const timespec wait{static_cast<time_t>(left.count() / 1'000'000'000),
                          static_cast<long>(left.count() % 1'000'000'000)};
      sig = sigtimedwait(&signals, nullptr, &wait);
      if (sig < 0 && errno == EINTR) continue;
      if (sig < 0) return 0;  // EAGAIN: the time passed
    } else if (sigwait(&signals, &sig) != 0) {
      return SIGINT;  // only for a bad set: stop rather than spin
    }
    if (sig == SIGHUP) {
      std::fputs(server.reopen_access_log()
                     ? "anteroom: SIGHUP received, reopening the access log\n"
                     : "anteroom: SIGHUP received; there is no access log file to reopen\n",
                 stderr);
      continue;
    }
    return sig;
  }
}

// SIGTERM drains for --drain-seconds: readiness 503 and connections closed after each
// answer while a load balancer moves visitors away, then (a margin before the end: a
// quarter, at most 2 s) the listener closes, streams are told to reconnect and in-flight
// requests get the margin. SIGINT, a second signal, or --drain-seconds 0 stop at once
// (with the 2 s grace).
void stop_when_told(const sigset_t& signals, anteroom::Server& server, unsigned drain_seconds) {
  const int sig = wait_for_stop_signal(signals, server);
  const auto drain = std::chrono::milliseconds(int64_t{drain_seconds} * 1000);
  if (sig != SIGTERM || drain.count() == 0) {
    std::fprintf(stderr, "anteroom: %s received, shutting down\n",
                 sig == SIGTERM ? "SIGTERM" : "SIGINT");
    return server.stop();
  }
  const auto margin = std::min(std::chrono::milliseconds(2000), drain / 4);
  std::fprintf(stderr, "anteroom: SIGTERM received, draining for %u s\n", drain_seconds);
  server.drain();
  const int again =
      wait_for_stop_signal(signals, server, std::chrono::steady_clock::now() + drain - margin);
  if (again != 0) {
    std::fputs("anteroom: a second signal, shutting down\n", stderr);
    return server.stop();
  }
  std::fputs("anteroom: drained, closing the listener and the streams\n", stderr);
  server.stop(static_cast<int>(margin.count()));
}

// The engine the flags ask for: a cluster node, the persistent engine, or (--no-persistence)
// the sharded engine alone; null, after saying why, if it cannot be had. The draw seeds' and
// random picks' keys come from the token secret, never from what the log holds: a reader of
// the log cannot compute a draw before its start.
std::unique_ptr<anteroom::Engine> open_engine(const anteroom::Options& o, const std::string& secret,
                                              const anteroom::TokenSigner& tokens) {
  using namespace anteroom;
  if (!o.cluster.empty()) {
    auto node = open_cluster_node(o, secret, tokens);
    if (node.is_ok()) return std::move(node.value());
    std::fprintf(stderr, "anteroom: cannot join the cluster: %s\n",
                 node.status().message().c_str());
    return nullptr;
  }
  EngineOptions e;
  e.secret = derive(secret, "anteroom engine secret");
  e.max_rooms = o.max_rooms;
  if (!o.persistence) return make_sharded_engine(std::move(e));
  std::string warnings;
  auto opened = open_persistent_engine({o.data_dir, LogWriter::parse_sync(o.appendfsync).value(),
                                        uint64_t{o.snapshot_after_mb} << 20},
                                       e, &warnings);
  if (!warnings.empty()) std::fprintf(stderr, "anteroom: warning: %s", warnings.c_str());
  if (opened.is_ok()) return std::move(opened.value());
  std::fprintf(stderr, "anteroom: cannot start: %s\n", opened.status().message().c_str());
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace anteroom;
  if (!standard_files_open()) return 1;
  std::signal(SIGPIPE, SIG_IGN);
  // check-log only reads: Ctrl-C, SIGTERM and SIGHUP end it as they end any command.
  if (argc >= 2 && std::string_view(argv[1]) == "check-log") return check_log_main(argc, argv);
  if (argc >= 2 && std::string_view(argv[1]) == "health") return health_main(argc, argv);
  // Block the stop signals before any thread starts (the log writer is one), so every thread
  // inherits the mask and only sigwait below takes them; a thread without the mask would
  // let SIGTERM kill the process instead of stopping it. SIGHUP is taken the same way (it
  // reopens the access log, for logrotate): left to its default action it would end the
  // process, and a server started from a terminal goes on when the terminal hangs up.
  sigset_t signals;
  sigemptyset(&signals);
  block(&signals, {SIGINT, SIGTERM, SIGHUP});
  std::string exit_now;
  auto options = parse_options(argc, argv, &exit_now);
  if (!exit_now.empty()) {
    std::fputs(exit_now.c_str(), stdout);
    return 0;
  }
  if (!options.is_ok()) {
    std::fprintf(stderr, "anteroom: %s (see --help)\n", options.status().message().c_str());
    return 2;
  }
  Options o = options.value();
  fit_connections_to_descriptors(&o);
  auto secrets = load_secrets(o.data_dir, o.token_secret, o.admin_key);
  if (!secrets.is_ok()) {
    std::fprintf(stderr, "anteroom: %s\n", secrets.status().message().c_str());
    return 1;
  }
  auto tokens = token_signer(o, secrets->token_secret);
  if (!tokens) return 1;
  std::unique_ptr<Engine> engine = open_engine(o, secrets->token_secret, *tokens);
  if (engine == nullptr) return 1;

  Server server(o, secrets->admin_key, secrets->token_secret, std::move(*tokens),
                std::move(engine));
  auto port = server.start();
  if (!port.is_ok()) {
    std::fprintf(stderr, "anteroom: %s\n", port.status().message().c_str());
    return 1;
  }
  // An IPv6 host in brackets, as a URL writes it.
  auto url_host = [](const std::string& h) {
    return h.find(':') == std::string::npos ? h : "[" + h + "]";
  };
  std::printf("anteroom listening on http://%s:%u\n", url_host(o.host()).c_str(),
              static_cast<unsigned>(port.value()));
  if (!o.admin_listen.empty()) {
    std::printf("operator routes on http://%s:%u\n", url_host(o.admin_host()).c_str(),
                static_cast<unsigned>(server.admin_port()));
  }
  if (o.admin_key.empty()) std::printf("admin key: %s\n", secrets->admin_key.c_str());
  if (!o.demo_room.empty()) {
    std::printf("demo room: open http://%s:%u/wait/%s in a browser\n", url_host(o.host()).c_str(),
                static_cast<unsigned>(port.value()), o.demo_room.c_str());
  }
  std::fflush(stdout);

  stop_when_told(signals, server, o.drain_seconds);
  return 0;
}
