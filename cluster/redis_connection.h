// One connection to a Redis server on an Asio io_context, speaking RESP through hiredis's
// reader and command formatter: commands are pipelined (sent as soon as asked, answered in
// order) and each reply goes to its command's handler. Every method runs on the
// io_context's one thread.
//
// A connection that fails (refused, reset, a reply that does not parse, or a command left
// unanswered for `timeout_ms`) closes: every command still waiting is answered with an
// error reply ("connection lost: ..."), then on_close runs. It never reconnects by itself;
// the owner makes a new one.
//
// With an access (redis_access.h) it speaks TLS and says who it is before `connect`'s
// `done` runs; a refusal comes to `done` as an error that redis_access_refused names.
//
// Subscribed (after SUBSCRIBE), Redis sends messages no command asked for: they go to
// on_push instead, and the connection takes no other commands.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/redis_access.h"
#include "cluster/redis_reply.h"

struct redisReader;

namespace anteroom::cluster {

class RedisConnection : public std::enable_shared_from_this<RedisConnection> {
 public:
  using Handler = std::function<void(const RedisReply&)>;

  RedisConnection(boost::asio::io_context& io, std::string host, uint16_t port, int64_t timeout_ms,
                  std::shared_ptr<const RedisAccess> access = nullptr);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Resolves and connects; `done` gets an empty string on success, else why not.
  void connect(std::function<void(const std::string& error)> done);
  void command(const std::vector<std::string>& args, Handler handler);
  // Puts the connection into subscriber mode on `channel`; every message goes to on_push.
  void subscribe(const std::string& channel, Handler on_push);
  void close(const std::string& why);
  bool is_open() const { return open_; }
  size_t pending() const { return waiting_.size(); }

  std::function<void(const std::string& why)> on_close;

 private:
  struct Tls;
  boost::asio::ip::tcp::socket& socket();  // the TCP socket, under TLS or not
  void secured(std::function<void(const std::string& error)> done);
  void introduce(const std::function<void(const std::string& error)>& done);
  std::string scrubbed(std::string text) const;
  void start_read();
  void flush();
  void on_read(size_t n);
  void arm_watchdog();
  void deliver(const RedisReply& reply);

  boost::asio::io_context& io_;
  std::string host_;
  uint16_t port_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<const RedisAccess> access_;
  boost::asio::ip::tcp::socket socket_;  // unused under TLS (tls_ holds the socket)
  std::unique_ptr<Tls> tls_;
  boost::asio::steady_timer watchdog_;
  redisReader* reader_;
  bool open_ = false;
  bool closed_ = false;
  bool writing_ = false;
  bool subscriber_ = false;
  Handler on_push_;
  std::string out_;      // formatted commands not yet written
  std::string sending_;  // the buffer the socket is writing
  struct Waiting {
    Handler handler;
    std::chrono::steady_clock::time_point since;
  };
  std::deque<Waiting> waiting_;
  std::vector<char> in_;
};

}  // namespace anteroom::cluster
