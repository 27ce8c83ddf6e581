// The anteroom server: engine, HTTP/SSE/WebSocket listener, the engine pump that runs
// admission and expiry and feeds the push hub. Beast stays inside server.cc.
//
// Thread safety: start() then stop() from one thread; wait() from any; reopen_access_log()
// from any once start() has returned.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "server/app/options.h"
#include "server/app/token.h"

namespace anteroom {

class Server {
 public:
  // `admin_key` and `token_secret` must be set (see secrets.h). `engine` is the one to
  // serve (e.g. a persistent one, see main.cc); null: a fresh in-memory engine.
  Server(Options options, std::string admin_key, const std::string& token_secret,
         std::unique_ptr<Engine> engine = nullptr);
  // The same with the signer of admission tokens given (ES256, see load_token_signer); the
  // token secret still keys what the secret keys besides HS256 tokens.
  Server(Options options, std::string admin_key, const std::string& token_secret,
         TokenSigner tokens, std::unique_ptr<Engine> engine = nullptr);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts the I/O threads; returns the bound port (useful with port 0).
  Result<uint16_t> start();
  // The start of a drain: /readyz answers 503 (a load balancer takes the node out) and every
  // answer closes its connection (a client's next request goes through the balancer again);
  // everything else is served as before until stop(). Idempotent.
  void drain();
  // Graceful: stop accepting, tell streams to reconnect, finish in-flight requests (at most
  // `grace_ms`), stop the threads. Idempotent.
  void stop(int grace_ms = 2000);
  // Blocks until stop() has finished.
  void wait();
  // Has the --access-log writer open its path again (SIGHUP, main.cc; see AccessLog::reopen)
  // and returns at once; false, doing nothing, without a log file to reopen (no
  // --access-log, standard output, a pipe).
  bool reopen_access_log();

  Engine& engine();
  // The port of --admin-listen once started (0 without one).
  uint16_t admin_port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anteroom
