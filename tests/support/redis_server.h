// A real redis-server (Debian's) for a test: started on a free 127.0.0.1 port in a fresh
// temporary directory, stopped and removed with the object. Ready means it accepts
// connections: start() polls a connect, bounded to five seconds.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace anteroom::testing {

class RedisServer {
 public:
  // `extra`: more redis-server arguments, e.g. {"--appendonly", "yes", "--appendfsync",
  // "always"}; "{port}" in one stands for port() (TLS only: {"--port", "0", "--tls-port",
  // "{port}", ...}).
  explicit RedisServer(std::vector<std::string> extra = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  bool start();  // again after stop() or kill(): the same port and directory
  void stop();   // SHUTDOWN-like: SIGTERM and wait (it saves what its config says)
  void kill();   // SIGKILL and wait
  bool running() const { return pid_ > 0; }
  uint16_t port() const { return port_; }
  const std::string& dir() const { return dir_; }

 private:
  std::vector<std::string> extra_;
  std::string dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

// A port nobody listens on now (the kernel's choice for a bind to port 0).
uint16_t free_port();
// Whether something accepts connections on 127.0.0.1:port.
bool accepts(uint16_t port);

}  // namespace anteroom::testing
