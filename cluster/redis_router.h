// Commands to Redis by key: to a single Redis, or to the shard of a Redis Cluster that owns
// the key's slot (CRC16 of its hash tag, as Redis Cluster numbers slots). The router asks
// CLUSTER SLOTS at start, keeps one connection per master, follows MOVED (the slot moved:
// the map is corrected and the command sent there) and ASK (sent once there, after ASKING),
// and waits out TRYAGAIN and CLUSTERDOWN; each of these answers means the command was not
// executed, so sending it again is safe. A connection that fails closes the router (every
// waiting command gets an error, then on_close runs); the owner makes a new one, which
// learns the topology anew (after a failover, the promoted replica).
//
// Every method runs on the io_context's one thread.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/redis_connection.h"

namespace anteroom::cluster {

using Endpoint = std::pair<std::string, uint16_t>;

// Redis Cluster's slot of a key: CRC16 (XMODEM) of the part inside the first {...} if that
// is not empty, else of the whole key, modulo 16384.
uint16_t key_slot(std::string_view key);

class RedisRouter : public std::enable_shared_from_this<RedisRouter> {
 public:
  using Handler = RedisConnection::Handler;

  // Every connection it opens uses `access` (none: plain TCP without AUTH).
  RedisRouter(boost::asio::io_context& io, std::vector<Endpoint> seeds, int64_t timeout_ms,
              std::shared_ptr<const RedisAccess> access = nullptr);
  ~RedisRouter();
  RedisRouter(const RedisRouter&) = delete;
  RedisRouter& operator=(const RedisRouter&) = delete;

  // Connects to the first seed that answers and learns whether it is a cluster (and then
  // its masters, connecting to each). `done` gets an empty string on success.
  void connect(const std::function<void(const std::string& error)>& done);
  // The key is the command's: args[1], or for EVAL/EVALSHA the first key (args[3]); WAIT
  // goes where the command before it went.
  void command(const std::vector<std::string>& args, Handler handler);
  void close(const std::string& why);
  bool clustered() const { return clustered_; }
  const Endpoint& seed() const { return seed_; }  // the one that answered

  // Sent first on every connection the router opens (SCRIPT LOAD).
  std::vector<std::vector<std::string>> on_each_connection;
  std::function<void(const std::string& why)> on_close;

 private:
  struct Shard {
    Endpoint at;
    std::shared_ptr<RedisConnection> conn;
  };
  void try_seed(size_t i, const std::function<void(const std::string&)>& done);
  void learn_slots(const std::function<void(const std::string&)>& done);
  void open_shards(const std::function<void(const std::string&)>& done);
  std::shared_ptr<RedisConnection> open(const Endpoint& at);
  size_t shard_at(const Endpoint& at);  // adds it (unconnected) if new
  void send(size_t shard, std::vector<std::string> args, Handler handler, int tries, bool asking);

  boost::asio::io_context& io_;
  std::vector<Endpoint> seeds_;
  int64_t timeout_ms_;
  std::shared_ptr<const RedisAccess> access_;
  Endpoint seed_;
  bool clustered_ = false;
  bool closed_ = false;
  std::vector<Shard> shards_;
  std::array<uint16_t, 16384> slots_{};  // slot -> index into shards_
  size_t last_shard_ = 0;                // where the last command went (for WAIT)
};

}  // namespace anteroom::cluster
